// The replicated store across ranks without failures: round trips with and
// without permutation ranges, versions, memory held, bad arguments. Every
// rank runs every test (submit and load are collective).
#include <rampart/comm/comm.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <cstring>

#include "store_data.hpp"

namespace rs = rampart::store;
using store_test::blocks;

namespace {
int me() { return rampart::comm::rank(); }
int ranks() { return rampart::comm::size(); }

void expect_equal(const std::vector<char>& got, const std::vector<std::byte>& want) {
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
}
}  // namespace

TEST(Store, EachRankLoadsTheNextRanksBlocks) {
    const std::size_t bb = 64;
    const std::uint64_t per = 1000, n = per * static_cast<std::uint64_t>(ranks());
    rs::store s(bb);
    const auto mine = blocks(per * static_cast<std::uint64_t>(me()), per, bb);
    EXPECT_EQ(s.submit(per * static_cast<std::uint64_t>(me()), mine, n), 1u);
    EXPECT_EQ(s.version(), 1u);
    EXPECT_EQ(s.blocks(), n);
    const std::uint64_t next = per * static_cast<std::uint64_t>((me() + 1) % ranks());
    expect_equal(s.load({{next, per}}), blocks(next, per, bb));
}

TEST(Store, PermutationRangesLoadEverythingInAnyOrder) {
    const std::size_t bb = 32;
    const std::uint64_t per = 4096, n = per * static_cast<std::uint64_t>(ranks());
    rs::options o;
    o.permutation_range_bytes = 64 * bb;
    o.seed = 11;
    rs::store s(bb, o);
    s.submit(per * static_cast<std::uint64_t>(me()), blocks(per * static_cast<std::uint64_t>(me()), per, bb), n);
    // Two ranges, the later one first, across ranges and ranks.
    const std::vector<rs::id_range> ask{{n / 2 + 7, n / 2 - 7}, {3, n / 2 - 3}};
    auto got = s.load(ask);
    auto want = blocks(n / 2 + 7, n / 2 - 7, bb);
    auto low = blocks(3, n / 2 - 3, bb);
    want.insert(want.end(), low.begin(), low.end());
    expect_equal(got, want);
}

TEST(Store, EveryRankHoldsRCopiesOfItsShare) {
    const std::size_t bb = 16;
    const std::uint64_t per = 512, n = per * static_cast<std::uint64_t>(ranks());
    rs::options o;
    o.replicas = std::min(2, ranks());
    rs::store s(bb, o);
    s.submit(per * static_cast<std::uint64_t>(me()), blocks(per * static_cast<std::uint64_t>(me()), per, bb), n);
    EXPECT_EQ(s.counters().bytes_held, static_cast<std::uint64_t>(o.replicas) * per * bb);
}

TEST(Store, ANewVersionReplacesTheOldOneOnceComplete) {
    const std::size_t bb = 8;
    const std::uint64_t per = 100, n = per * static_cast<std::uint64_t>(ranks());
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    rs::store s(bb);
    s.submit(first, blocks(first, per, bb, 1), n);
    // The second version through the serialize callback.
    EXPECT_EQ(s.submit(
                  first, per,
                  [&](std::uint64_t id, std::span<std::byte> out) {
                      for (std::size_t j = 0; j < bb; ++j)
                          out[j] = static_cast<std::byte>(store_test::byte_of(id, j, 2));
                  },
                  n),
              2u);
    EXPECT_EQ(s.version(), 2u);
    expect_equal(s.load({{0, n}}), blocks(0, n, bb, 2));
    const std::uint64_t r = static_cast<std::uint64_t>(s.replicas());
    EXPECT_EQ(s.counters().bytes_held, r * per * bb);  // version 1 is gone
    auto values = s.load_as<std::uint64_t>(std::vector<rs::id_range>{{5, 2}});
    ASSERT_EQ(values.size(), 2u);
}

TEST(Store, BadArgumentsAreClearErrors) {
    EXPECT_THROW(rs::store(0), rampart::invalid_argument);
    EXPECT_THROW(rs::store(8, rs::options{ranks() + 1, 0, 0}), rampart::invalid_argument);
    EXPECT_THROW(rs::store(8, rs::options{0, 12, 0}), rampart::invalid_argument);  // 12 bytes: not whole blocks
    const std::size_t bb = 8;
    const std::uint64_t per = 10, n = per * static_cast<std::uint64_t>(ranks());
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    rs::store s(bb);
    EXPECT_THROW(s.load({{0, 1}}), rampart::invalid_argument);                            // nothing submitted yet
    EXPECT_THROW(s.submit(first, blocks(first, per, bb), 0), rampart::invalid_argument);  // empty version
    auto odd = blocks(first, per, bb);
    odd.pop_back();
    EXPECT_THROW(s.submit(first, odd, n), rampart::invalid_argument);  // not whole blocks
    // Every rank submits its share but declares one block too many: the parts do not fit.
    try {
        s.submit(first, blocks(first, per, bb), n + 1);
        ADD_FAILURE() << "a version with a missing block was accepted";
    } catch (const rs::store_error& e) {
        EXPECT_NE(std::string(e.what()).find("submitted"), std::string::npos) << e.what();
    }
    EXPECT_EQ(s.version(), 0u);
    s.submit(first, blocks(first, per, bb), n);
    EXPECT_THROW(s.load({{n - 1, 2}}), rampart::invalid_argument);      // past the end
    EXPECT_THROW(s.load({{0, 5}, {4, 2}}), rampart::invalid_argument);  // overlapping
    EXPECT_THROW(s.load({{3, 0}}), rampart::invalid_argument);          // empty range
    expect_equal(s.load({{0, 3}}), blocks(0, 3, bb));                   // and it still works
}

TEST(Store, LoadsIntoTheCallersMemory) {
    const std::size_t bb = 64;
    const std::uint64_t per = 3000, n = per * static_cast<std::uint64_t>(ranks());
    rs::store s(bb, rs::options{0, 4096, 3});  // 64-block ranges: long and short runs alike
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    s.submit(first, blocks(first, per, bb), n);
    // Everything but this rank's blocks, in two ranges, into one array of
    // the program's with guard bytes around it.
    std::vector<rs::id_range> ask;
    if (first > 0) ask.push_back({0, first});
    if (first + per < n) ask.push_back({first + per, n - first - per});
    const std::size_t bytes = (n - per) * bb;
    std::vector<std::byte> memory(bytes + 2 * bb, std::byte{0x5a});
    s.load(ask, std::span<std::byte>(memory.data() + bb, bytes));
    std::vector<std::byte> want = blocks(0, first, bb);
    const auto rest = blocks(first + per, n - first - per, bb);
    want.insert(want.end(), rest.begin(), rest.end());
    EXPECT_EQ(std::memcmp(memory.data() + bb, want.data(), bytes), 0);
    for (std::size_t i = 0; i < bb; ++i) {
        EXPECT_EQ(memory[i], std::byte{0x5a});
        EXPECT_EQ(memory[bb + bytes + i], std::byte{0x5a});
    }
    // Memory of the wrong size is a clear error on the rank that gave it;
    // the others' loads, in the same collective step, go through.
    std::vector<std::byte> mine(per * bb - (me() == 0 ? bb : 0));
    if (me() == 0)
        EXPECT_THROW(s.load({{first, per}}, mine), rampart::invalid_argument);
    else
        EXPECT_NO_THROW(s.load({{first, per}}, mine));
    if (me() != 0) {
        EXPECT_EQ(std::memcmp(mine.data(), blocks(first, per, bb).data(), mine.size()), 0);
    }
    EXPECT_THROW(s.load({{0, 1}}, std::span<std::byte>()), rampart::invalid_argument);
}
