#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

using namespace rampart;

namespace {
// Fails the first `failures` calls, then returns 42.
struct flaky {
    std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
    int failures;
    int operator()() const {
        if (calls->fetch_add(1) < failures) throw std::runtime_error("transient");
        return 42;
    }
};
}  // namespace

TEST(Replay, SucceedsFirstTime) {
    reset_counters();
    EXPECT_EQ(async_replay(3, [] { return 1; }).get(), 1);
    auto c = read_counters();
    EXPECT_EQ(c.tasks, 1u);
    EXPECT_EQ(c.replays, 0u);
}

TEST(Replay, FailureThenSuccess) {
    reset_counters();
    flaky f{.failures = 2};
    EXPECT_EQ(async_replay(3, f).get(), 42);
    EXPECT_EQ(f.calls->load(), 3);
    auto c = read_counters();
    EXPECT_EQ(c.replays, 2u);
    EXPECT_EQ(c.task_exceptions, 2u);
    EXPECT_EQ(c.exhausted, 0u);
}

TEST(Replay, ExhaustionNestsLastException) {
    reset_counters();
    flaky f{.failures = 100};
    auto fut = async_replay(4, f);
    try {
        fut.get();
        FAIL() << "no exception";
    } catch (const replay_exhausted& e) {
        EXPECT_EQ(e.attempts(), 4u);
        EXPECT_NE(std::string(e.what()).find("transient"), std::string::npos);
        EXPECT_THROW(std::rethrow_if_nested(e), std::runtime_error);
    }
    EXPECT_EQ(f.calls->load(), 4);
    EXPECT_EQ(read_counters().exhausted, 1u);
}

TEST(Replay, ValidateRejectsInvalidResults) {
    reset_counters();
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto fut = async_replay_validate(
        5, [](int v) { return v >= 3; }, [calls] { return calls->fetch_add(1) + 1; });
    EXPECT_EQ(fut.get(), 3);
    auto c = read_counters();
    EXPECT_EQ(c.validations_failed, 2u);
    EXPECT_EQ(c.replays, 2u);
}

TEST(Replay, ValidateAllInvalidIsExhaustion) {
    auto fut = async_replay_validate(
        2, [](int) { return false; }, [] { return 1; });
    try {
        fut.get();
        FAIL();
    } catch (const replay_exhausted& e) {
        EXPECT_THROW(std::rethrow_if_nested(e), validation_failed);
    }
}

TEST(Replay, ThrowingValidatorIsNamed) {
    auto fut = async_replay_validate(
        2, [](int) -> bool { throw std::logic_error("validator bug"); }, [] { return 1; });
    try {
        fut.get();
        FAIL();
    } catch (const replay_exhausted& e) {
        EXPECT_NE(std::string(e.what()).find("validator threw"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("validator bug"), std::string::npos);
    }
}

TEST(Replay, ArgumentsAreTheSameInEveryAttempt) {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto fut = async_replay(
        3,
        [calls](const std::vector<int>& v) {
            if (calls->fetch_add(1) == 0) throw std::runtime_error("first");
            return v.size();
        },
        std::vector<int>(10, 1));
    EXPECT_EQ(fut.get(), 10u);
}

TEST(Replay, VoidResult) {
    flaky f{.failures = 1};
    async_replay(2, [f] { (void)f(); }).get();
    EXPECT_EQ(f.calls->load(), 2);
}

TEST(Replay, DataflowReplayReplaysOnFailure) {
    reset_counters();
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto a = async([] { return 20; });
    auto b = async([] { return 22; });
    auto c = dataflow_replay(
        3,
        [calls](shared_future<int> x, shared_future<int> y) {
            if (calls->fetch_add(1) == 0) throw std::runtime_error("first");
            return x.get() + y.get();
        },
        std::move(a), std::move(b));
    EXPECT_EQ(c.get(), 42);
    EXPECT_EQ(read_counters().replays, 1u);
}

TEST(Replay, DataflowReplayValidate) {
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto c = dataflow_replay_validate(
        3, [](int v) { return v == 2; }, [calls](auto x) { return x.get() + calls->fetch_add(1); },
        make_ready_future(1));
    EXPECT_EQ(c.get(), 2);
}

TEST(Replay, ExceptionFromDataflowInputExhausts) {
    reset_counters();
    auto bad = async([]() -> int { throw std::domain_error("input"); });
    auto c = dataflow_replay(
        3, [](auto x) { return x.get(); }, std::move(bad));
    try {
        c.get();
        FAIL();
    } catch (const replay_exhausted& e) {
        EXPECT_THROW(std::rethrow_if_nested(e), std::domain_error);
    }
    EXPECT_EQ(read_counters().replays, 2u);
}

TEST(Replay, ZeroCountIsInvalid) {
    EXPECT_THROW(async_replay(0, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(async_replay_validate(
                     0, [](int) { return true; }, [] { return 1; }),
                 rampart::invalid_argument);
    EXPECT_THROW(dataflow_replay(0, [] { return 1; }), rampart::invalid_argument);
    EXPECT_THROW(make_replay_executor(0), rampart::invalid_argument);
}

TEST(Replay, InjectedFaultsAreReplayedAwayReproducibly) {
    reset_counters();
    fault_injector inject(0.2, 7);
    std::vector<future<int>> v;
    for (int i = 0; i < 2000; ++i)
        v.push_back(async_replay(10, [&inject, i] {
            inject.maybe_throw(i);
            return i;
        }));
    long sum = 0;
    for (auto& f : v) sum += f.get();
    EXPECT_EQ(sum, 2000L * 1999 / 2);
    auto c = read_counters();
    EXPECT_GT(inject.injected(), 300u);
    EXPECT_EQ(c.replays, inject.injected());
    EXPECT_EQ(c.exhausted, 0u);

    // The same seed injects the same faults whatever the scheduling.
    fault_injector again(0.2, 7);
    std::vector<future<int>> w;
    for (int i = 0; i < 2000; ++i)
        w.push_back(async_replay(10, [&again, i] {
            again.maybe_throw(i);
            return i;
        }));
    for (auto& f : w) f.get();
    EXPECT_EQ(again.injected(), inject.injected());
}
