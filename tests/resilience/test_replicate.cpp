#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <stdexcept>

using namespace rampart;

TEST(Replicate, AllSucceedFirstWins) {
    reset_counters();
    auto f = async_replicate(3, [] { return this_task::replica() * 10 + 1; });
    EXPECT_EQ(f.get(), 1u);  // replica 0, deterministic order
    auto c = read_counters();
    EXPECT_EQ(c.replicas_launched, 3u);
    EXPECT_EQ(c.tasks, 1u);
}

TEST(Replicate, FirstNonThrowingWins) {
    auto f = async_replicate(3, [] {
        if (this_task::replica() < 2) throw std::runtime_error("copy failed");
        return 7;
    });
    EXPECT_EQ(f.get(), 7);
}

TEST(Replicate, AllFailRethrowsLastNested) {
    reset_counters();
    auto f =
        async_replicate(3, []() -> int { throw std::runtime_error("copy " + std::to_string(this_task::replica())); });
    try {
        f.get();
        FAIL();
    } catch (const replicate_failed& e) {
        EXPECT_NE(std::string(e.what()).find("copy 2"), std::string::npos);
        EXPECT_THROW(std::rethrow_if_nested(e), std::runtime_error);
    }
    EXPECT_EQ(read_counters().exhausted, 1u);
}

// A chain of resilient tasks that fail because their input failed says what
// went wrong once, not once per task of the chain.
TEST(Replicate, AChainOfFailuresNamesTheRootCauseOnce) {
    auto f = async_replicate(3, []() -> int { throw std::runtime_error("the root cause"); });
    for (int i = 0; i < 20; ++i)
        f = i % 2 ? dataflow_replicate(
                        3, [](auto x) { return x.get() + 1; }, std::move(f))
                  : dataflow_replay(
                        2, [](auto x) { return x.get() + 1; }, std::move(f));
    try {
        f.get();
        FAIL();
    } catch (const replicate_failed& e) {
        const std::string what = e.what();
        EXPECT_EQ(what, "rampart: all 3 replicas failed; last failure: the root cause");
    }
}

TEST(Replicate, ValidatePicksFirstValid) {
    auto f = async_replicate_validate(
        4, [](unsigned v) { return v >= 2; }, [] { return this_task::replica(); });
    EXPECT_EQ(f.get(), 2u);
    auto none = async_replicate_validate(
        2, [](int) { return false; }, [] { return 1; });
    try {
        none.get();
        FAIL();
    } catch (const replicate_failed& e) {
        EXPECT_THROW(std::rethrow_if_nested(e), validation_failed);
    }
}

TEST(Replicate, VoteOutvotesCorruptedReplica) {
    reset_counters();
    auto f = async_replicate_vote(3, majority_vote{}, [] {
        std::vector<double> v(100, 1.5);
        if (this_task::replica() == 1) v[37] = -1.5;  // a silent corruption in one copy
        return v;
    });
    auto v = f.get();
    EXPECT_EQ(v[37], 1.5);
    auto c = read_counters();
    EXPECT_EQ(c.votes_lost, 1u);
    EXPECT_EQ(c.replicas_launched, 3u);
}

TEST(Replicate, VoteWithBitFlipInjection) {
    reset_counters();
    // At high rates two copies can flip the same bit and outvote the good one
    // (a limit of majority voting); 5% keeps that away for this seed.
    fault_injector inject(0.05, 11);
    std::vector<future<std::uint64_t>> v;
    for (std::uint64_t i = 0; i < 2000; ++i)
        v.push_back(async_replicate_replay(3, 5, majority_vote{}, [&inject, i] {
            std::uint64_t r = i * 3;
            inject.maybe_flip_bit(r, i);
            return r;
        }));
    for (std::uint64_t i = 0; i < 2000; ++i) EXPECT_EQ(v[i].get(), i * 3);
    auto c = read_counters();
    EXPECT_GT(inject.injected(), 200u);
    EXPECT_GT(c.votes_lost, 0u);
    EXPECT_EQ(c.exhausted, 0u);
}

TEST(Replicate, NoMajorityIsVoteFailed) {
    auto f = async_replicate_vote(3, majority_vote{}, [] { return this_task::replica(); });
    EXPECT_THROW(f.get(), vote_failed);
}

TEST(Replicate, UserVoteReturningNoResult) {
    auto f = async_replicate_vote(
        3, [](std::vector<int>&&) -> std::optional<int> { return std::nullopt; }, [] { return 1; });
    EXPECT_THROW(f.get(), vote_failed);
}

TEST(Replicate, UserVoteReturningValue) {
    auto f = async_replicate_vote(
        3,
        [](std::vector<int>&& r) {
            int m = r[0];
            for (int x : r) m = std::max(m, x);
            return m;
        },
        [] { return static_cast<int>(this_task::replica()); });
    EXPECT_EQ(f.get(), 2);
}

TEST(Replicate, ThrowingVoteReachesFuture) {
    auto f = async_replicate_vote(
        2, [](std::vector<int>&&) -> int { throw std::logic_error("vote bug"); }, [] { return 1; });
    EXPECT_THROW(f.get(), std::logic_error);
}

TEST(Replicate, VoteValidateIgnoresInvalid) {
    auto f = async_replicate_vote_validate(
        5, majority_vote{}, [](int v) { return v != 9; },
        [] { return this_task::replica() < 2 ? 9 : 4; });  // two invalid, three agree
    EXPECT_EQ(f.get(), 4);
}

TEST(Replicate, CopiesReplayOnTheirOwnFailures) {
    reset_counters();
    auto f = async_replicate_replay(3, 3, majority_vote{}, [] {
        if (this_task::attempt() == 0 && this_task::replica() != 0) throw std::runtime_error("first attempt");
        return 5;
    });
    EXPECT_EQ(f.get(), 5);
    auto c = read_counters();
    EXPECT_EQ(c.replays, 2u);
    EXPECT_EQ(c.votes_lost, 0u);
}

TEST(Replicate, DataflowForms) {
    auto a = async([] { return 2; }).share();
    EXPECT_EQ(dataflow_replicate(
                  3, [](auto x) { return x.get() + 1; }, a)
                  .get(),
              3);
    EXPECT_EQ(dataflow_replicate_validate(
                  3, [](int v) { return v > 0; }, [](auto x) { return x.get(); }, a)
                  .get(),
              2);
    EXPECT_EQ(dataflow_replicate_vote(
                  3, majority_vote{}, [](auto x) { return x.get() * 2; }, a)
                  .get(),
              4);
    EXPECT_EQ(dataflow_replicate_vote_validate(
                  3, majority_vote{}, [](int v) { return v == 6; }, [](auto x) { return x.get() * 3; }, a)
                  .get(),
              6);
    EXPECT_EQ(dataflow_replicate_replay(
                  3, 2, majority_vote{}, [](auto x, int y) { return x.get() + y; }, a, 5)
                  .get(),
              7);
}

TEST(Replicate, DataflowWaitsForInputs) {
    promise<int> p;
    auto f = dataflow_replicate_vote(
        3, majority_vote{}, [](auto x) { return x.get(); }, p.get_future());
    EXPECT_FALSE(f.is_ready());
    p.set_value(9);
    EXPECT_EQ(f.get(), 9);
}

TEST(Replicate, FinishWaitsForReplicas) {
    std::atomic<int> n{0};
    finish([&] {
        async_replicate(3, [&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            return ++n;
        });
        dataflow_replicate(
            2, [&](auto) { return ++n; }, async([] { return 0; }));
    });
    EXPECT_EQ(n.load(), 5);
}

TEST(Replicate, ZeroCountsAreInvalid) {
    EXPECT_THROW(async_replicate(0, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(async_replicate_vote(0, majority_vote{}, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(async_replicate_replay(3, 0, majority_vote{}, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(dataflow_replicate(0, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(make_replicate_executor(0), rampart::invalid_argument);
}

TEST(MajorityVote, Cases) {
    majority_vote v;
    EXPECT_EQ(v(std::vector<int>{1, 2, 1}), 1);
    EXPECT_EQ(v(std::vector<int>{2, 1, 1}), 1);
    EXPECT_EQ(v(std::vector<int>{7}), 7);
    EXPECT_FALSE(v(std::vector<int>{1, 2}).has_value());
    EXPECT_FALSE(v(std::vector<int>{1, 2, 3}).has_value());
    EXPECT_FALSE(v(std::vector<int>{}).has_value());
    EXPECT_EQ(v(std::vector<int>{3, 1, 3, 2, 3}), 3);
}
