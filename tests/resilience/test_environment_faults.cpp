// RAMPART_ERROR_RATE / RAMPART_SEED (rampart-run --error-rate/--seed): the
// runtime fails attempts of resilient tasks on purpose; results stay exact.
// Its own binary, because the rate is read once per process.

#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

using namespace rampart;

TEST(EnvironmentFaults, ResilientTasksFailAtTheRateAndStillGiveExactResults) {
    setenv("RAMPART_ERROR_RATE", "0.2", 1);
    setenv("RAMPART_SEED", "5", 1);
    reset_counters();
    const int n = 2000;
    std::vector<future<long>> replayed, replicated, plain;
    for (int i = 0; i < n; ++i) {
        replayed.push_back(async_replay(
            20, [](int x) { return 3L * x; }, i));
        replicated.push_back(async_replicate_replay(
            3, 10, majority_vote{}, [](int x) { return 5L * x; }, i));
    }
    for (int i = 0; i < n; ++i) plain.push_back(async([](int x) { return 7L * x; }, i));
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(replayed[i].get(), 3L * i);
        ASSERT_EQ(replicated[i].get(), 5L * i);
        ASSERT_EQ(plain[i].get(), 7L * i);
    }
    auto c = read_counters();
    // 2000 replayed tasks at 20% and 6000 copies: far more than a few hits.
    EXPECT_GT(c.faults_injected, 800u);
    EXPECT_LT(c.faults_injected, 3000u);
    EXPECT_GT(c.replays, 300u);
    EXPECT_EQ(c.exhausted, 0u);
    unsetenv("RAMPART_ERROR_RATE");
    unsetenv("RAMPART_SEED");
}
