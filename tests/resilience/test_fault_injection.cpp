#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

using namespace rampart;

TEST(FaultInjection, RateIsRespected) {
    fault_injector inject(0.1, 3);
    int hits = 0;
    for (std::uint64_t k = 0; k < 100000; ++k) hits += inject.hits(k) ? 1 : 0;
    EXPECT_NEAR(hits / 100000.0, 0.1, 0.01);
    fault_injector never(0.0, 3), always(1.0, 3);
    EXPECT_FALSE(never.hits(5));
    EXPECT_TRUE(always.hits(5));
}

TEST(FaultInjection, FlipChangesExactlyOneBit) {
    fault_injector always(1.0, 9);
    std::vector<double> v(64, 1.0);
    auto before = v;
    EXPECT_TRUE(always.maybe_flip_bit(v, 17));
    int differing_bits = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::uint64_t a, b;
        std::memcpy(&a, &v[i], 8);
        std::memcpy(&b, &before[i], 8);
        differing_bits += std::popcount(a ^ b);
    }
    EXPECT_EQ(differing_bits, 1);
    EXPECT_EQ(always.injected(), 1u);
}

TEST(FaultInjection, DecisionDependsOnAttempt) {
    fault_injector inject(0.5, 1);
    // Over many keys, the decision in attempt 0 and in attempt 1 differ for
    // some: a replay is an independent draw.
    int differ = 0;
    for (std::uint64_t k = 0; k < 1000; ++k) {
        bool first = inject.hits(k);
        bool second = async_replay(2, [&inject, k] {
                          if (this_task::attempt() == 0) throw std::runtime_error("go to attempt 1");
                          return inject.hits(k);
                      }).get();
        differ += first != second;
    }
    EXPECT_GT(differ, 300);
}

TEST(FaultInjection, BadRateIsInvalid) {
    EXPECT_THROW(fault_injector(-0.1, 1), rampart::invalid_argument);
    EXPECT_THROW(fault_injector(1.5, 1), rampart::invalid_argument);
}

TEST(FaultInjection, ThrowCounts) {
    fault_injector always(1.0, 2);
    EXPECT_THROW(always.maybe_throw(1), injected_fault);
    EXPECT_EQ(always.injected(), 1u);
}
