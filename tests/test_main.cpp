// One runtime for the whole test binary, with two workers so that the tests
// exercise real concurrency on a 2-core machine.
#include <rampart/task/runtime.hpp>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    rampart::runtime rt(2);
    return RUN_ALL_TESTS();
}
