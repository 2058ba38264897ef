// Messages and resilient tasks: a send leaves only with the accepted result;
// a receive inside a resilient task is made once for all attempts and copies.
// After each case the sender sends a sentinel, so the receiver can tell that
// nothing else arrived before it.
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace rampart;

namespace {
constexpr int sentinel = -12345;
int me() { return comm::rank(); }

// On rank 1: the messages up to the sentinel, in order.
std::vector<int> received_until_sentinel(int tag) {
    std::vector<int> got;
    for (int v = comm::irecv<int>(0, tag).get(); v != sentinel; v = comm::irecv<int>(0, tag).get()) got.push_back(v);
    return got;
}
}  // namespace

TEST(Deferred, ReplayedTaskSendsOnlyFromItsAcceptedAttempt) {
    if (me() == 0) {
        auto r = async_replay(3, [] {
            comm::isend(1, 800, static_cast<int>(this_task::attempt()));
            if (this_task::attempt() < 2) throw std::runtime_error("fail after sending");
            return 0;
        });
        r.get();
        comm::isend(1, 800, sentinel).get();
    } else if (me() == 1) {
        EXPECT_EQ(received_until_sentinel(800), std::vector<int>{2});
    }
}

TEST(Deferred, RejectedResultSendsNothing) {
    if (me() == 0) {
        async_replay_validate(
            3, [](int v) { return v == 1; },
            [] {
                comm::isend(1, 801, 100 + static_cast<int>(this_task::attempt()));
                return static_cast<int>(this_task::attempt());
            })
            .get();
        comm::isend(1, 801, sentinel).get();
    } else if (me() == 1) {
        EXPECT_EQ(received_until_sentinel(801), std::vector<int>{101});
    }
}

TEST(Deferred, OutvotedCopySendsNothing) {
    if (me() == 0) {
        auto r = async_replicate_vote(3, majority_vote{}, [] {
            const int replica = static_cast<int>(this_task::replica());
            const int value = replica == 1 ? 666 : 42;  // copy 1 is corrupted
            comm::isend(1, 810, value * 10 + replica);
            return value;
        });
        EXPECT_EQ(r.get(), 42);
        comm::isend(1, 810, sentinel).get();
    } else if (me() == 1) {
        // Exactly one message, from the first copy that voted for the winner.
        EXPECT_EQ(received_until_sentinel(810), std::vector<int>{420});
    }
}

TEST(Deferred, AwaitCheckSendsAfterTheCheck) {
    if (me() == 0) {
        promise<int> p;
        auto out = p.get_future();
        async_await_check(
            [] {
                comm::isend(1, 840, 50 + static_cast<int>(this_task::attempt()));
                return static_cast<int>(this_task::attempt());
            },
            std::move(p), [](const int& v) { return v == 1; });
        EXPECT_EQ(out.get(), 1);
        comm::isend(1, 840, sentinel).get();
    } else if (me() == 1) {
        EXPECT_EQ(received_until_sentinel(840), std::vector<int>{51});
    }
}

TEST(Deferred, ReceiveInsideReplicasIsPostedOnce) {
    if (me() == 0) {
        comm::isend(1, 820, 21).get();
        comm::isend(1, 820, sentinel).get();
    } else if (me() == 1) {
        auto r = async_replicate_vote(3, majority_vote{}, [] { return comm::irecv<int>(0, 820).get() * 2; });
        EXPECT_EQ(r.get(), 42);
        // The three copies consumed one message: the next one is the sentinel.
        EXPECT_EQ(comm::irecv<int>(0, 820).get(), sentinel);
    }
}

TEST(Deferred, ReplayGetsTheSameMessageAgain) {
    if (me() == 0) {
        comm::isend(1, 830, 5).get();
        comm::isend(1, 830, 6).get();
        comm::isend(1, 830, sentinel).get();
    } else if (me() == 1) {
        auto r = async_replay(3, [] {
            int first = comm::irecv<int>(0, 830).get();
            int second = comm::irecv<int>(0, 830).get();
            if (this_task::attempt() == 0) throw std::runtime_error("fail after receiving");
            return first * 10 + second;
        });
        EXPECT_EQ(r.get(), 56);
        EXPECT_EQ(comm::irecv<int>(0, 830).get(), sentinel);
    }
}

TEST(Deferred, PlainTasksSendAtOnce) {
    if (me() == 0) {
        // Outside resilient tasks the send is not held: waiting for it in the
        // task completes.
        async([] { comm::isend(1, 850, 7).get(); }).get();
        comm::isend(1, 850, sentinel).get();
    } else if (me() == 1) {
        EXPECT_EQ(received_until_sentinel(850), std::vector<int>{7});
    }
}
