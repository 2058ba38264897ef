#include <rampart/store/placement.hpp>

#include <gtest/gtest.h>

#include <set>
#include <vector>

using rampart::store::permutation;
using rampart::store::placement;

TEST(Permutation, IsABijectionWithItsInverse) {
    for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 17ULL, 64ULL, 1000ULL, 4097ULL}) {
        permutation pi(n, 42);
        std::vector<char> seen(n, 0);
        for (std::uint64_t x = 0; x < n; ++x) {
            const std::uint64_t y = pi(x);
            ASSERT_LT(y, n);
            ASSERT_FALSE(seen[y]) << "n=" << n << " x=" << x;
            seen[y] = 1;
            ASSERT_EQ(pi.inverse(y), x);
        }
    }
    EXPECT_THROW(permutation(10, 1)(10), std::invalid_argument);
}

TEST(Permutation, DependsOnTheSeedAndMovesThings) {
    permutation a(1000, 1), b(1000, 2);
    int differ = 0, fixed = 0;
    for (std::uint64_t x = 0; x < 1000; ++x) {
        differ += a(x) != b(x);
        fixed += a(x) == x;
    }
    EXPECT_GT(differ, 900);
    EXPECT_LT(fixed, 20);
}

TEST(Placement, WithoutPermutationEachPeIsFirstForAContiguousEqualShare) {
    placement where(1000, 4, 2, 0, 7);
    for (std::uint64_t id = 0; id < 1000; ++id) EXPECT_EQ(where.first_holder(id), static_cast<int>(id / 250));
    const auto u = where.unit_of(600);
    EXPECT_EQ(u.first_id, 500u);
    EXPECT_EQ(u.count, 250u);
    EXPECT_EQ(u.first_holder, 2);
}

TEST(Placement, CopiesArePOverRApart) {
    placement where(4096, 8, 4, 0, 1);
    for (std::uint64_t id = 0; id < 4096; id += 97) {
        const int f = where.first_holder(id);
        std::set<int> holders;
        for (int k = 0; k < 4; ++k) {
            EXPECT_EQ(where.holder(id, k), (f + 2 * k) % 8);
            holders.insert(where.holder(id, k));
        }
        EXPECT_EQ(holders.size(), 4u);  // r distinct PEs
    }
    placement odd(100, 5, 3, 0, 1);  // r does not divide p: copies still on distinct PEs
    for (std::uint64_t id = 0; id < 100; ++id) {
        std::set<int> holders;
        for (int k = 0; k < 3; ++k) holders.insert(odd.holder(id, k));
        EXPECT_EQ(holders.size(), 3u);
    }
}

TEST(Placement, PermutationRangesStayTogetherAndSpreadEvenly) {
    const std::uint64_t n = 64 * 1024, range = 256;
    placement where(n, 8, 2, range, 3);
    std::vector<int> ranges_per_pe(8, 0);
    for (std::uint64_t r0 = 0; r0 < n; r0 += range) {
        const int f = where.first_holder(r0);
        for (std::uint64_t id = r0; id < r0 + range; id += 17) ASSERT_EQ(where.first_holder(id), f);
        ++ranges_per_pe[static_cast<std::size_t>(f)];
    }
    for (int c : ranges_per_pe) EXPECT_EQ(c, 32);  // 256 ranges over 8 PEs, each gets exactly its share
    // One PE's former ids (the first eighth) are first-held by many PEs.
    std::set<int> servers;
    for (std::uint64_t id = 0; id < n / 8; id += range) servers.insert(where.first_holder(id));
    EXPECT_GE(servers.size(), 6u);
}

TEST(Placement, UnitsCutARequestWhereTheHoldersChange) {
    placement where(1000, 4, 2, 0, 1);
    const auto us = where.units(200, 400);  // crosses 250 and 500
    ASSERT_EQ(us.size(), 3u);
    EXPECT_EQ(us[0].first_id, 200u);
    EXPECT_EQ(us[0].count, 50u);
    EXPECT_EQ(us[1].count, 250u);
    EXPECT_EQ(us[2].first_id, 500u);
    EXPECT_EQ(us[2].count, 100u);
    placement ranged(1000, 4, 2, 64, 1);
    std::uint64_t total = 0;
    for (auto& u : ranged.units(10, 990)) {
        EXPECT_EQ(ranged.first_holder(u.first_id), u.first_holder);
        EXPECT_EQ(ranged.first_holder(u.first_id + u.count - 1), u.first_holder);
        total += u.count;
    }
    EXPECT_EQ(total, 990u);
    EXPECT_EQ(ranged.unit_of(999).count, 1000u - 960u);  // the last range is short
}

TEST(Placement, BadArgumentsAreClearErrors) {
    EXPECT_THROW(placement(0, 4, 2, 0, 1), std::invalid_argument);
    EXPECT_THROW(placement(10, 4, 5, 0, 1), std::invalid_argument);
    EXPECT_THROW(placement(10, 4, 0, 0, 1), std::invalid_argument);
    placement where(10, 4, 2, 0, 1);
    EXPECT_THROW(where.first_holder(10), std::invalid_argument);
    EXPECT_THROW(where.units(5, 6), std::invalid_argument);
    EXPECT_THROW(where.units(~0ULL, 2), std::invalid_argument);
}

TEST(Placement, CopiesGoToDifferentNodesWhateverTheRankOrder) {
    // 8 ranks on 4 nodes, mapped round-robin (rank q on node q % 4), as a
    // launcher mapping by node does: in rank order, copies p/r = 4 apart
    // would share a node; along the node order they never do.
    std::vector<int> node_of(8);
    for (int q = 0; q < 8; ++q) node_of[static_cast<std::size_t>(q)] = q % 4;
    const rampart::store::node_order order(node_of);
    EXPECT_EQ(order.pes(), 8);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(order.position_of(order.pe_at(i)), i);
    for (const std::uint64_t range : {std::uint64_t{0}, std::uint64_t{16}}) {
        placement where(4096, 8, 2, range, 5, order);
        for (std::uint64_t id = 0; id < 4096; ++id) {
            const int a = where.holder(id, 0), b = where.holder(id, 1);
            ASSERT_NE(node_of[static_cast<std::size_t>(a)], node_of[static_cast<std::size_t>(b)]) << id;
        }
        // Copy 0 stays where the ids put it: the order moves only the others.
        placement plain(4096, 8, 2, range, 5);
        for (std::uint64_t id = 0; id < 4096; id += 31) EXPECT_EQ(where.first_holder(id), plain.first_holder(id));
    }
    // Ranks already in blocks per node: the order is the ranks' own.
    const rampart::store::node_order blocks({0, 0, 1, 1, 2, 2, 3, 3});
    EXPECT_EQ(blocks.pes(), 0);
    EXPECT_THROW(rampart::store::node_order(std::vector<int>{}), std::invalid_argument);
    EXPECT_THROW(placement(100, 4, 2, 0, 1, order), std::invalid_argument);  // an order of 8 PEs for 4
}
