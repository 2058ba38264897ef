# The two commands of the README: `make demo` and `make test`.
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: setup build demo test bench clean

setup:
	@tools/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) > /dev/null
	@cmake --build $(BUILD)

demo: build
	@tools/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j2 --timeout 300

clean:
	rm -rf $(BUILD)
