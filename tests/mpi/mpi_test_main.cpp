// main of the multi-rank tests: every rank runs the selected tests and prints
// its verdict (harness.hpp); any failing rank makes mpiexec fail.
#include <rampart/comm/comm.hpp>
#include <rampart/task/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdio>

#include "harness.hpp"

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the test log even if a run hangs later
    ::testing::InitGoogleTest(&argc, argv);
    rampart::runtime rt(2);
    (void)rampart::comm::rank();  // starts MPI before the tests
    const int rc = RUN_ALL_TESTS();
    const auto* unit = ::testing::UnitTest::GetInstance();
    return rc == 0 ? mpi_test::verdict(0, unit->test_to_run_count())
                   : mpi_test::verdict(unit->failed_test_count() > 0 ? unit->failed_test_count() : 1,
                                       unit->test_to_run_count());
}
