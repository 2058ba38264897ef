#include "stencil.hpp"

#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

using namespace rampart::stencil;

namespace {
config small(variant v, double rate) {
    config c;
    c.kind = v;
    c.subdomains = 24;
    c.points = 300;
    c.iterations = 60;
    c.steps = 8;
    c.error_rate = rate;
    c.seed = 5;
    return c;
}
}  // namespace

TEST(Stencil, VariantsAgreeWithoutFaults) {
    const auto ref = run(small(variant::dataflow, 0)).checksum;
    for (auto v : {variant::replay, variant::replay_checksum, variant::replicate_vote})
        EXPECT_EQ(run(small(v, 0)).checksum, ref) << to_string(v);
}

TEST(Stencil, FaultyRunsEqualFaultFree) {
    const auto ref = run(small(variant::dataflow, 0)).checksum;
    for (auto v : {variant::replay, variant::replay_checksum, variant::replicate_vote}) {
        auto r = run(small(v, 0.02));
        EXPECT_EQ(r.checksum, ref) << to_string(v);
        EXPECT_GT(r.faults_injected, 10u) << to_string(v);
        EXPECT_EQ(r.stats.exhausted, 0u);
        if (v == variant::replicate_vote) {
            EXPECT_GT(r.stats.votes_lost, 0u);
        } else {
            EXPECT_EQ(r.stats.replays, r.faults_injected) << to_string(v);
        }
        if (v == variant::replay_checksum) {
            EXPECT_EQ(r.stats.validations_failed, r.faults_injected);
        }
    }
}

TEST(Stencil, UnprotectedRunIsCorruptedByBitFlips) {
    // The injection really changes data: without resilience the answer differs.
    const auto ref = run(small(variant::dataflow, 0)).checksum;
    auto r = run(small(variant::dataflow, 0.02));
    EXPECT_GT(r.faults_injected, 10u);
    EXPECT_NE(r.checksum, ref);
}

TEST(Stencil, ChecksumDetectsEverySingleBitFlip) {
    partition p;
    p.values.assign(64, 0.25);
    p.checksum = word_sum(p.values);
    for (int bit = 0; bit < 64 * 64; ++bit) {
        auto q = p;
        auto* bytes = reinterpret_cast<unsigned char*>(q.values.data());
        bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
        ASSERT_FALSE(checksum_matches(q)) << "bit " << bit;
    }
}

TEST(Stencil, BadConfigurationIsAnError) {
    auto c = small(variant::dataflow, 0);
    c.points = 4;  // smaller than the 8-step ghost region
    EXPECT_THROW(run(c), rampart::invalid_argument);
    c = small(variant::dataflow, 0);
    c.subdomains = 0;
    EXPECT_THROW(run(c), rampart::invalid_argument);
    EXPECT_THROW(parse_variant("fast"), rampart::invalid_argument);
}
