// Which cores each replica set gets on a node with fewer cores than processes.
#include "../../src/replica/placement/set_cores.hpp"

#include <gtest/gtest.h>

namespace rd = rampart::replica::detail;
using cores = std::vector<std::vector<int>>;

TEST(ReplicaSetCores, EachSetGetsACoreOfItsOwn) {
    EXPECT_EQ(rd::set_cores({0, 0, 0, 0, 1, 1, 1, 1}, {0, 1}), (cores{{0}, {0}, {0}, {0}, {1}, {1}, {1}, {1}}));
}

TEST(ReplicaSetCores, SharesFollowTheSetsProcessesAndSparesStayWhereTheyAre) {
    // Three processes of set 0, one of set 1 and a spare on four cores.
    EXPECT_EQ(rd::set_cores({0, 0, 0, 1, -1}, {4, 5, 6, 7}), (cores{{4, 5, 6}, {4, 5, 6}, {4, 5, 6}, {7}, {}}));
}

TEST(ReplicaSetCores, CoresLeftOverAreShared) {
    EXPECT_EQ(rd::set_cores({0, 0, 1, 1}, {0, 1, 2}), (cores{{0, 2}, {0, 2}, {1, 2}, {1, 2}}));
}

TEST(ReplicaSetCores, EverySetHasACoreEvenWithFewProcesses) {
    EXPECT_EQ(rd::set_cores({0, 1, 1}, {0, 1}), (cores{{0}, {1}, {1}}));
    // One process of set 0, one of set 1, six of set 2 on three cores.
    EXPECT_EQ(rd::set_cores({0, 1, 2, 2, 2, 2, 2, 2}, {0, 1, 2}),
              (cores{{0}, {1}, {2}, {2}, {2}, {2}, {2}, {2}}));
}

TEST(ReplicaSetCores, NothingMovesWithoutCrowdingOrWithoutTwoSets) {
    const cores untouched(4);
    EXPECT_EQ(rd::set_cores({0, 0, 1, 1}, {0, 1, 2, 3}), untouched);  // a core per process
    EXPECT_EQ(rd::set_cores({0, 0, 0, 0}, {0, 1}), untouched);        // one set
    EXPECT_EQ(rd::set_cores({0, 1, 2, -1}, {0, 1}), untouched);       // fewer cores than sets
}
