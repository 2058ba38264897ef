// main of the multi-rank tests: every rank runs the same tests and prints its
// report (a failure on any rank must be visible); any failing rank makes
// mpiexec fail.
#include <rampart/comm/comm.hpp>
#include <rampart/task/runtime.hpp>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    rampart::runtime rt(2);
    (void)rampart::comm::rank();  // starts MPI before the tests
    int rc = RUN_ALL_TESTS();
    if (rc != 0) std::fprintf(stderr, "rank %d: tests failed\n", rampart::comm::rank());
    return rc;
}
