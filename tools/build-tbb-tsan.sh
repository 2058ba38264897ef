#!/usr/bin/env bash
# Builds oneTBB from Debian's own source package with ThreadSanitizer, so that
# TSan sees oneTBB's synchronisation (queues, allocator, resumable tasks)
# instead of reporting races through uninstrumented code.
# usage: tools/build-tbb-tsan.sh DIR   -> oneTBB installed in DIR/prefix
set -euo pipefail
dir=$(realpath -m "$1")
[ -f "$dir/prefix/lib/cmake/TBB/TBBConfig.cmake" ] && exit 0
mkdir -p "$dir/apt/lists/partial" "$dir/src"
cat > "$dir/apt/onetbb.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
# Private apt state: the system's package lists stay as they are.
apt_opts=(-o Dir::Etc::sourcelist="$dir/apt/onetbb.sources" -o Dir::Etc::SourceParts=/dev/null
          -o Dir::State::Lists="$dir/apt/lists" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$dir/src" && apt-get "${apt_opts[@]}" source --download-only -qq onetbb=2021.8.0-2+deb12u1)
tar -C "$dir/src" -xf "$dir"/src/onetbb_2021.8.0.orig.tar.xz
cmake -S "$dir/src/oneTBB-2021.8.0" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBBMALLOC_BUILD=ON -DTBBMALLOC_PROXY_BUILD=OFF -DTBB_STRICT=OFF \
      -DCMAKE_INSTALL_PREFIX="$dir/prefix" > /dev/null
cmake --build "$dir/build" > "$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; exit 1; }
cmake --install "$dir/build" > /dev/null
