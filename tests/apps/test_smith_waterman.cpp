#include "smith_waterman.hpp"

#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

using namespace rampart::smith_waterman;

namespace {
config small(variant v, double rate) {
    config c;
    c.kind = v;
    c.length_a = 700;
    c.length_b = 900;
    c.tile = 64;  // uneven last tiles on both sides
    c.error_rate = rate;
    c.input_seed = 3;
    c.seed = 3;
    return c;
}
}  // namespace

TEST(SmithWaterman, TilesGiveTheUntiledBestCell) {
    const auto whole = score_whole(make_sequence(700, 3), make_sequence(900, 4));
    EXPECT_GT(whole.score, 0);
    for (std::size_t tile : {1, 7, 64, 1000}) {
        config c = small(variant::baseline, 0);
        c.tile = tile;
        auto r = run(c);
        EXPECT_EQ(r.end.score, whole.score) << "tile " << tile;
        EXPECT_EQ(r.end.row, whole.row) << "tile " << tile;
        EXPECT_EQ(r.end.col, whole.col) << "tile " << tile;
    }
}

TEST(SmithWaterman, ResilientVariantsGiveTheFaultFreeChecksum) {
    const auto ref = run(small(variant::baseline, 0));
    for (variant v : {variant::replay, variant::replicate}) {
        auto r = run(small(v, 0.05));
        EXPECT_EQ(r.checksum, ref.checksum) << to_string(v);
        EXPECT_GT(r.faults_injected, 0u) << to_string(v);
        EXPECT_GT(r.stats.replays + r.stats.votes_lost, 0u) << to_string(v);
    }
    // Unprotected, the same bit flips change the answer: they were real.
    auto bad = run(small(variant::baseline, 0.05));
    EXPECT_GT(bad.faults_injected, 0u);
    EXPECT_NE(bad.checksum, ref.checksum);
}

TEST(SmithWaterman, BadInputIsAClearError) {
    config c = small(variant::baseline, 0);
    c.tile = 0;
    EXPECT_THROW(run(c), rampart::invalid_argument);
    c = small(variant::baseline, 0);
    c.length_a = 0;
    EXPECT_THROW(run(c), rampart::invalid_argument);
    EXPECT_THROW(parse_variant("nope"), rampart::invalid_argument);
    const std::string a = make_sequence(10, 1), b = make_sequence(10, 2);
    EXPECT_THROW(score_tile(a, b, 0, 5, 0, 5, std::vector<std::int32_t>(4), std::vector<std::int32_t>(6)),
                 rampart::invalid_argument);
    EXPECT_THROW(score_tile(a, b, 0, 11, 0, 5, std::vector<std::int32_t>(5), std::vector<std::int32_t>(12)),
                 rampart::invalid_argument);
}
