// The replica layer's local parts: where replicas are, who sends for a dead
// one, and the launcher's kill orders.
#include "../../src/replica/failures/fault_orders.hpp"
#include "../../src/replica/protocol/layout.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rd = rampart::replica::detail;

TEST(ReplicaLayout, ReplicasOfARankAreOneCopyOfTheProgramApart) {
    const rd::layout l(10, 2, 2);  // 4 ranks x 2 replicas + 2 spares
    EXPECT_EQ(l.ranks(), 4);
    EXPECT_EQ(l.process(1, 0), 1);
    EXPECT_EQ(l.process(1, 1), 5);
    EXPECT_EQ(l.rank_of(5), 1);
    EXPECT_EQ(l.replica_of(5), 1);
    EXPECT_EQ(l.rank_of(8), -1);  // a spare
}

TEST(ReplicaLayout, TheNextLiveReplicaSendsForADeadOne) {
    rd::layout l(12, 3, 0);
    EXPECT_EQ(l.responsible(2, 0), 0);
    l.mark_dead(l.process(2, 0));
    EXPECT_EQ(l.responsible(2, 0), 1);
    EXPECT_EQ(l.live_position(2, 1), 0);
    l.mark_dead(l.process(2, 1));
    EXPECT_EQ(l.responsible(2, 0), 2);
    EXPECT_EQ(l.responsible(2, 1), 2);
    l.mark_dead(l.process(2, 2));
    EXPECT_EQ(l.responsible(2, 0), -1);
    EXPECT_EQ(l.live_replicas(2), 0);
}

TEST(ReplicaLayout, ASpareThatReCreatesAReplicaIsThatReplica) {
    rd::layout l(6, 2, 2);  // 2 ranks x 2 replicas + spares 4 and 5
    EXPECT_TRUE(l.spare(4));
    EXPECT_EQ(l.rank_of(4), -1);
    l.mark_dead(l.process(1, 0));
    EXPECT_EQ(l.responsible(1, 0), 1);
    l.assign(1, 0, 4);
    EXPECT_EQ(l.process(1, 0), 4);
    EXPECT_EQ(l.rank_of(4), 1);
    EXPECT_EQ(l.replica_of(4), 0);
    EXPECT_EQ(l.responsible(1, 0), 0);  // sends for itself again
    EXPECT_EQ(l.live_replicas(1), 2);
    EXPECT_TRUE(l.spare(4));  // started as one
}

TEST(ReplicaLayout, ProcessesThatAreNotWholeReplicasAreRefused) {
    EXPECT_THROW(rd::layout(7, 2, 0), std::runtime_error);
    EXPECT_THROW(rd::layout(8, 0, 0), std::runtime_error);
    EXPECT_THROW(rd::layout(8, 2, 8), std::runtime_error);
}

TEST(ReplicaKillOrders, EveryFormIsRead) {
    const auto k = rd::parse_kill_orders("1.0@start,2.1@0.5s,0.2@send30,3.0@after7,1.1@recreate,1.1@recreate2,0.1@state");
    ASSERT_EQ(k.size(), 7u);
    EXPECT_EQ(k[0].at, rd::kill_order::when::start);
    EXPECT_EQ(k[1].rank, 2);
    EXPECT_EQ(k[1].replica, 1);
    EXPECT_DOUBLE_EQ(k[1].seconds, 0.5);
    EXPECT_EQ(k[2].at, rd::kill_order::when::send);
    EXPECT_EQ(k[2].message, 30);
    EXPECT_EQ(k[3].at, rd::kill_order::when::after);
    EXPECT_EQ(k[3].message, 7);
    EXPECT_EQ(k[4].at, rd::kill_order::when::recreate);
    EXPECT_EQ(k[4].message, 1);  // the first spare to re-create that replica
    EXPECT_EQ(k[5].message, 2);
    EXPECT_EQ(k[6].at, rd::kill_order::when::state);
}

TEST(ReplicaKillOrders, MalformedOrdersAreNamed) {
    for (const char* bad : {"1@start", "1.x@start", "1.0@", "1.0@soon", "1.0@send", "1.0@send3x", "1.0@1.5",
                            "-1.0@start", "1.0@startx", "1.0@recreatex"}) {
        try {
            rd::parse_kill_orders(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}
