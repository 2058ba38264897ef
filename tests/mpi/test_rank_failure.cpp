// A rank dies (SIGKILL) while its peer waits for its messages. Without spare
// ranks there is nothing to recover with: the waiting receive must fail with a
// comm_error that names the dead rank, and the survivor must shut down
// cleanly (final agreement, then Finalize under the watchdog).
#include <rampart/comm/comm.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "harness.hpp"

namespace comm = rampart::comm;

TEST(RankFailure, AReceiveFromADeadRankFailsNamingIt) {
    if (mpi_test::rank() == 1) {
        comm::isend(0, 1, 41).get();
        mpi_test::kill_ranks({1});
    }
    if (mpi_test::rank() != 0) return;
    EXPECT_EQ(comm::irecv<int>(1, 1).get(), 41);
    try {
        comm::irecv<int>(1, 1).get();
        ADD_FAILURE() << "a second message came from the dead rank";
    } catch (const comm::comm_error& e) {
        EXPECT_NE(std::string(e.what()).find("failed ranks: 1 "), std::string::npos) << e.what();
        std::printf("survivor saw: %s\n", e.what());
    }
}
