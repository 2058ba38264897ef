// The engine's support for checkpoints, on two working ranks: the snapshot of
// the channel counts, restoring them (sends resume their numbering, receives
// drop what the checkpoint holds), trimming the send log, and the clear error
// for messages that no process can send any more. Each test uses its own
// tags. Run with and without a spare rank (with one, sends are logged).
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace rampart;
using comm::detail::channel_state;
using comm::detail::engine;

namespace {

int me() { return comm::rank(); }
int other() { return 1 - comm::rank(); }

std::uint64_t count_of(const std::vector<channel_state::count>& v, int peer, int tag) {
    for (const auto& c : v)
        if (c.peer == peer && c.tag == tag) return c.messages;
    return 0;
}

bool logging() { return std::getenv("RAMPART_SPARES") && std::string(std::getenv("RAMPART_SPARES")) != "0"; }

// Both ranks reach this point before either goes on (on a tag of its own).
void meet(int tag) {
    comm::isend(other(), tag, me()).get();
    EXPECT_EQ(comm::irecv<int>(other(), tag).get(), other());
}

}  // namespace

TEST(ChannelCheckpoints, TwoWorkingRanks) { ASSERT_EQ(comm::size(), 2) << "run on 2 ranks (plus spares)"; }

TEST(ChannelCheckpoints, SnapshotCountsSentAndDeliveredMessages) {
    if (me() == 0) {
        for (int i = 0; i < 3; ++i) comm::isend(1, 1000, i).get();
        for (int i = 0; i < 2; ++i) EXPECT_EQ(comm::irecv<int>(1, 1001).get(), i);
    } else {
        for (int i = 0; i < 3; ++i) EXPECT_EQ(comm::irecv<int>(0, 1000).get(), i);
        for (int i = 0; i < 2; ++i) comm::isend(0, 1001, i).get();
    }
    const channel_state s = engine::get().snapshot_channels();
    EXPECT_EQ(s.rank, me());
    EXPECT_EQ(count_of(s.sent, other(), me() == 0 ? 1000 : 1001), me() == 0 ? 3u : 2u);
    EXPECT_EQ(count_of(s.received, other(), me() == 0 ? 1001 : 1000), me() == 0 ? 2u : 3u);
    EXPECT_EQ(count_of(s.sent, other(), me() == 0 ? 1001 : 1000), 0u);
    EXPECT_TRUE(std::is_sorted(s.sent.begin(), s.sent.end(),
                               [](auto& a, auto& b) { return std::pair(a.peer, a.tag) < std::pair(b.peer, b.tag); }));
    EXPECT_EQ(channel_state::from_bytes(s.to_bytes()), s);
}

TEST(ChannelCheckpoints, SnapshotWithAPendingReceiveThrows) {
    if (me() == 1) {
        auto pending = comm::irecv<int>(0, 1100);
        try {
            engine::get().snapshot_channels();
            ADD_FAILURE() << "no error with a receive pending";
        } catch (const rampart::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("receive from rank 0 with tag 1100 is posted and not delivered"),
                      std::string::npos)
                << e.what();
        }
        comm::isend(0, 1101, 1).get();  // now rank 0 may send
        EXPECT_EQ(pending.get(), 42);
        const channel_state s = engine::get().snapshot_channels();  // nothing pending now
        EXPECT_EQ(count_of(s.received, 0, 1100), 1u);
    } else {
        comm::irecv<int>(1, 1101).get();
        comm::isend(1, 1100, 42).get();
    }
}

TEST(ChannelCheckpoints, RestoredChannelsResumeTheirNumbering) {
    // Both ranks act as replacements resumed from a checkpoint in which rank
    // 0 had sent 5 messages with tag 1200 (rank 1 had them all) and rank 1
    // had sent 7 with tag 1201.
    auto& e = engine::get();
    channel_state s;
    s.rank = me();
    if (me() == 0) {
        s.sent = {{1, 1200, 5}};
        s.received = {{1, 1201, 7}};
    } else {
        s.sent = {{0, 1201, 7}};
        s.received = {{0, 1200, 5}};
    }
    const auto log_before = e.counters().send_log_messages;
    e.restore_channels(s);
    const auto dropped = e.counters().duplicates_dropped;  // the duplicates may be dropped before irecv is called
    meet(1202);
    if (me() == 0) {
        // What survivors re-send from their logs: below the count, dropped.
        std::vector<future<void>> sent;
        for (std::uint64_t seq : {2, 3, 4}) {
            promise<void> p;
            sent.push_back(p.get_future());
            e.post_raw(1, 1200, seq, comm::detail::encode(int{-1}), {}, std::move(p));
        }
        wait_all(sent);
        comm::isend(1, 1200, 55).get();  // message 5
        EXPECT_EQ(comm::irecv<int>(1, 1201).get(), 77);
        const channel_state now = e.snapshot_channels();
        EXPECT_EQ(count_of(now.sent, 1, 1200), 6u);
        EXPECT_EQ(count_of(now.received, 1, 1201), 8u);
    } else {
        EXPECT_EQ(comm::irecv<int>(0, 1200).get(), 55);
        EXPECT_EQ(e.counters().duplicates_dropped, dropped + 3);
        comm::isend(0, 1201, 77).get();  // message 7: rank 0 would drop a message 0
        const channel_state now = e.snapshot_channels();
        EXPECT_EQ(count_of(now.sent, 0, 1201), 8u);
        EXPECT_EQ(count_of(now.received, 0, 1200), 6u);
    }
    // The log took the first message at the restored count.
    EXPECT_EQ(e.counters().send_log_messages, log_before + (logging() ? 2 : 0));  // this one and meet's
}

TEST(ChannelCheckpoints, RestoreRefusesWhatCannotWork) {
    auto& e = engine::get();
    comm::isend(other(), 1300, 1).get();
    EXPECT_EQ(comm::irecv<int>(other(), 1300).get(), 1);

    channel_state s;
    s.rank = me();
    s.sent = {{other(), 1301, 4}, {other(), 1300, 9}};  // sent on 1300 already
    std::sort(s.sent.begin(), s.sent.end(),
              [](auto& a, auto& b) { return std::pair(a.peer, a.tag) < std::pair(b.peer, b.tag); });
    try {
        e.restore_channels(s);
        ADD_FAILURE() << "restored a used channel";
    } catch (const rampart::invalid_argument& x) {
        EXPECT_NE(std::string(x.what()).find("with tag 1300 has been sent on already"), std::string::npos) << x.what();
    }
    s.sent = {};
    s.received = {{other(), 1300, 3}};
    EXPECT_THROW(e.restore_channels(s), rampart::invalid_argument);  // received on already

    channel_state foreign;
    foreign.rank = other();
    EXPECT_THROW(e.restore_channels(foreign), rampart::invalid_argument);
    channel_state out_of_range;
    out_of_range.rank = me();
    out_of_range.sent = {{comm::size(), 1, 1}};
    EXPECT_THROW(e.restore_channels(out_of_range), rampart::invalid_argument);
    out_of_range.sent = {{other(), e.max_tag() + 1, 1}};
    EXPECT_THROW(e.restore_channels(out_of_range), rampart::invalid_argument);

    // Nothing changed: tag 1301 still starts at 0.
    comm::isend(other(), 1301, 2).get();
    EXPECT_EQ(comm::irecv<int>(other(), 1301).get(), 2);
}

TEST(ChannelCheckpoints, TrimShrinksTheSendLog) {
    auto& e = engine::get();
    const std::vector<double> big(1000, 1.5);
    if (me() == 0)
        for (int i = 0; i < 10; ++i) comm::isend(1, 1400, big).get();
    else
        for (int i = 0; i < 10; ++i) EXPECT_EQ(comm::irecv<std::vector<double>>(0, 1400).get(), big);
    meet(1401);
    const auto before = e.counters();
    const channel_state s = e.snapshot_channels();
    e.trim_send_log(s);
    const auto after = e.counters();
    if (logging()) {
        EXPECT_GT(before.send_log_messages, 0u);
        EXPECT_EQ(after.send_log_messages, 0u);  // everything sent so far was before this checkpoint
        EXPECT_EQ(after.send_log_bytes, 0u);
        EXPECT_EQ(after.send_log_trimmed, before.send_log_trimmed + before.send_log_messages);
        if (me() == 0) {
            EXPECT_GE(before.send_log_bytes, 10 * big.size() * sizeof(double));
        }
    } else {
        EXPECT_EQ(after.send_log_messages, 0u);
    }
    e.trim_send_log(s);  // again: nothing more
    EXPECT_EQ(e.counters().send_log_trimmed, after.send_log_trimmed);

    // Sends go on after a trim, and are logged again.
    comm::isend(other(), 1402, 3).get();
    EXPECT_EQ(comm::irecv<int>(other(), 1402).get(), 3);
    EXPECT_EQ(e.counters().send_log_messages, logging() ? 1u : 0u);

    channel_state beyond = s;
    beyond.sent.push_back({other(), 1403, 1});  // never sent on
    std::sort(beyond.sent.begin(), beyond.sent.end(),
              [](auto& a, auto& b) { return std::pair(a.peer, a.tag) < std::pair(b.peer, b.tag); });
    try {
        e.trim_send_log(beyond);
        ADD_FAILURE() << "trimmed messages never sent";
    } catch (const rampart::invalid_argument& x) {
        EXPECT_NE(std::string(x.what()).find("only 0 were sent"), std::string::npos) << x.what();
    }
    channel_state foreign;
    foreign.rank = other();
    EXPECT_THROW(e.trim_send_log(foreign), rampart::invalid_argument);
}

TEST(ChannelCheckpoints, MissingMessagesFailTheReceive) {
    auto& e = engine::get();
    if (me() == 0) {
        // Message 3 with 0 to 2 never sent: as after a log trimmed past them.
        promise<void> p;
        auto f = p.get_future();
        e.post_raw(1, 1500, 3, comm::detail::encode(int{3}), {}, std::move(p));
        f.get();
    } else {
        const auto lost = e.counters().channels_lost;
        try {
            comm::irecv<int>(0, 1500).get();
            ADD_FAILURE() << "a later message was delivered in place of the missing ones";
        } catch (const comm::comm_error& x) {
            EXPECT_NE(std::string(x.what()).find("irecv from rank 0 with tag 1500 failed: messages 0 to 2"),
                      std::string::npos)
                << x.what();
        }
        EXPECT_EQ(e.counters().channels_lost, lost + 1);
        EXPECT_THROW(comm::irecv<int>(0, 1500).get(), comm::comm_error);  // the channel stays broken
    }
    meet(1501);
}

TEST(ChannelCheckpoints, ARestoredSenderAheadOfTheReceiverFailsItsReceives) {
    // Rank 0 resumes as if it had sent 10 messages with tag 1600 that rank 1
    // never had: rank 1 learns it from the restore's word, and its receive
    // fails instead of waiting forever.
    auto& e = engine::get();
    if (me() == 0) {
        channel_state s;
        s.rank = 0;
        s.sent = {{1, 1600, 10}};
        e.restore_channels(s);
    } else {
        try {
            comm::irecv<int>(0, 1600).get();
            ADD_FAILURE() << "no error";
        } catch (const comm::comm_error& x) {
            EXPECT_NE(std::string(x.what()).find("irecv from rank 0 with tag 1600 failed: messages 0 to 9"),
                      std::string::npos)
                << x.what();
        }
    }
    meet(1601);
}

TEST(ChannelCheckpoints, RestoreReportsACheckpointOlderThanTheLogs) {
    // On a channel to itself a rank is both sides: its sends resume at 10,
    // its receives at 4, so messages 4 to 9 can never come.
    auto& e = engine::get();
    channel_state s;
    s.rank = me();
    s.sent = {{me(), 1700, 10}};
    s.received = {{me(), 1700, 4}};
    try {
        e.restore_channels(s);
        ADD_FAILURE() << "no error";
    } catch (const comm::comm_error& x) {
        EXPECT_NE(std::string(x.what()).find("from rank " + std::to_string(me()) + " with tag 1700 (messages 4 to 9)"),
                  std::string::npos)
            << x.what();
    }
    // The state is restored all the same: receives on the channel fail, sends
    // go on at 10.
    EXPECT_THROW(comm::irecv<int>(me(), 1700).get(), comm::comm_error);
    const channel_state now = e.snapshot_channels();
    EXPECT_EQ(count_of(now.sent, me(), 1700), 10u);
    EXPECT_EQ(count_of(now.received, me(), 1700), 4u);
}
