// The assignment of logical ranks to processes after crashes, and the send
// log, without MPI: every process must reach the same answer from the same
// list of dead processes.
#include "../../src/recovery/membership.hpp"
#include "../../src/recovery/send_log.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

using rampart::recovery::detail::membership;
using rampart::recovery::detail::send_log;

TEST(Membership, LastProcessesAreSpares) {
    membership m(6, 2);
    EXPECT_EQ(m.logical_size(), 4);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(m.process_of(r), r);
    EXPECT_EQ(m.logical_of(4), -1);
    EXPECT_EQ(m.idle_spares(), (std::vector<int>{4, 5}));
    EXPECT_EQ(m.alive_processes(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Membership, RejectsSparesWithoutWorkers) {
    EXPECT_THROW(membership(2, 2), std::invalid_argument);
    EXPECT_THROW(membership(2, -1), std::invalid_argument);
    EXPECT_NO_THROW(membership(1, 0));
}

TEST(Membership, LowestDeadRankGetsLowestSpare) {
    membership m(7, 3);
    auto c = m.remove({3, 1});
    EXPECT_EQ(c.dead_logical, (std::vector<int>{1, 3}));
    ASSERT_EQ(c.replacements.size(), 2u);
    EXPECT_EQ(c.replacements[0], std::make_pair(1, 4));
    EXPECT_EQ(c.replacements[1], std::make_pair(3, 5));
    EXPECT_TRUE(c.lost.empty());
    EXPECT_EQ(m.process_of(1), 4);
    EXPECT_EQ(m.logical_of(5), 3);
    EXPECT_EQ(m.incarnation(1), 1);
    EXPECT_EQ(m.incarnation(0), 0);
    EXPECT_EQ(m.idle_spares(), (std::vector<int>{6}));
}

TEST(Membership, ReplacementCanDieAgain) {
    membership m(6, 2);
    m.remove({1});
    auto c = m.remove({4});  // the spare that had become rank 1
    EXPECT_EQ(c.dead_logical, (std::vector<int>{1}));
    EXPECT_EQ(m.process_of(1), 5);
    EXPECT_EQ(m.incarnation(1), 2);
}

TEST(Membership, DeadSpareIsDroppedAndNotReplaced) {
    membership m(6, 2);
    auto c = m.remove({4});
    EXPECT_TRUE(c.dead_logical.empty());
    EXPECT_EQ(c.dead_spares, (std::vector<int>{4}));
    EXPECT_EQ(m.idle_spares(), (std::vector<int>{5}));
    // A rank and the spare it would have had die together: the next spare.
    m = membership(6, 2);
    c = m.remove({2, 4});
    EXPECT_EQ(c.replacements, (std::vector<std::pair<int, int>>{{2, 5}}));
}

TEST(Membership, NoSpareLeftLosesTheRank) {
    membership m(5, 1);
    m.remove({1});
    auto c = m.remove({2, 3});
    EXPECT_EQ(c.lost, (std::vector<int>{2, 3}));
    EXPECT_EQ(m.lost(), (std::vector<int>{2, 3}));
    EXPECT_EQ(m.process_of(2), -1);
    EXPECT_EQ(m.alive_processes(), (std::vector<int>{0, 4}));
    // Unknown and already dead processes change nothing.
    c = m.remove({2, 99, -1});
    EXPECT_TRUE(c.dead_logical.empty() && c.dead_spares.empty());
}

namespace {
rampart::comm::detail::envelope env(int dest, int tag, std::uint64_t seq) {
    rampart::comm::detail::envelope e;
    e.destination = dest;
    e.tag = tag;
    e.sequence = seq;
    return e;
}
}  // namespace

TEST(SendLog, ResendsWhatTheReceiverLacks) {
    send_log log;
    for (std::uint64_t s = 0; s < 5; ++s) log.record(env(1, 7, s), rampart::comm::detail::encode(double(s)));
    for (std::uint64_t s = 0; s < 3; ++s) log.record(env(1, 8, s), rampart::comm::detail::encode(int(s)));
    log.record(env(2, 7, 0), rampart::comm::detail::encode(int(0)));
    EXPECT_EQ(log.messages(), 9u);
    EXPECT_EQ(log.bytes(), 9 * 48u + 5 * sizeof(double) + 4 * sizeof(int));

    std::vector<std::pair<int, std::uint64_t>> out;
    log.for_each_unreceived(
        1, [](int tag) { return tag == 7 ? 3u : 0u; },
        [&](const auto& m) { out.emplace_back(m.env.tag, m.env.sequence); });
    EXPECT_EQ(out, (std::vector<std::pair<int, std::uint64_t>>{{7, 3}, {7, 4}, {8, 0}, {8, 1}, {8, 2}}));

    out.clear();  // a receiver with everything, and one past the end
    log.for_each_unreceived(
        1, [](int) { return 9u; }, [&](const auto& m) { out.emplace_back(m.env.tag, m.env.sequence); });
    log.for_each_unreceived(
        3, [](int) { return 0u; }, [&](const auto& m) { out.emplace_back(m.env.tag, m.env.sequence); });
    EXPECT_TRUE(out.empty());
}

TEST(SendLog, RejectsAGapInSequence) {
    send_log log;
    log.record(env(1, 7, 0), {});
    EXPECT_THROW(log.record(env(1, 7, 2), {}), std::logic_error);
}
