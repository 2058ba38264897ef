// Submissions that do not fit together: ids that no rank submitted (a gap),
// ids that two ranks submitted (an overlap), or both with counts that add up
// to the total. Every rank must refuse the version with the same store_error
// naming the first gap and overlap, the previous version must stay, and a
// following correct submit must work. Runs on 2 or more ranks.
#include <rampart/comm/comm.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "store_data.hpp"

namespace rs = rampart::store;
using store_test::blocks;

namespace {
int me() { return rampart::comm::rank(); }
int ranks() { return rampart::comm::size(); }

constexpr std::size_t bb = 24;
constexpr std::uint64_t per = 1000;
std::uint64_t total() { return per * static_cast<std::uint64_t>(ranks()); }

// Every rank's text equals this rank's (each sends its text to all).
void expect_same_everywhere(const std::string& text, int tag) {
    std::vector<rampart::future<void>> sent;
    for (int q = 0; q < ranks(); ++q)
        if (q != me()) sent.push_back(rampart::comm::isend(q, tag, std::string(text)));
    for (int q = 0; q < ranks(); ++q)
        if (q != me()) {
            EXPECT_EQ(rampart::comm::irecv<std::string>(q, tag).get(), text) << "rank " << q;
        }
    for (auto& f : sent) f.get();
}

// Version 1 (salt 1) from every rank's share, then version 2 from the ranges
// `[from, to)` this rank is given: it must be refused on every rank with the
// same text, ending in `expected`; then version 2 (salt 3) from the shares
// is accepted.
void refused_then_usable(std::uint64_t from, std::uint64_t to, const std::string& expected, int tag) {
    rs::store s(bb);
    const std::uint64_t first = per * static_cast<std::uint64_t>(me()), n = total();
    ASSERT_EQ(s.submit(first, blocks(first, per, bb, 1), n), 1u);
    std::string text;
    try {
        s.submit(from, blocks(from, to - from, bb, 2), n);
        ADD_FAILURE() << "a version that does not fit together was accepted";
    } catch (const rs::store_error& e) {
        text = e.what();
        EXPECT_FALSE(e.by_failures()) << "a program error taken for a failure's effect";
    }
    EXPECT_EQ(text, "rampart::store::submit: version 2 is abandoned, version 1 stays: " + expected);
    expect_same_everywhere(text, tag);
    EXPECT_EQ(s.version(), 1u);
    const auto got = s.load({{0, n}});
    const auto want = blocks(0, n, bb, 1);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
    // The store goes on: a submit that fits is accepted.
    EXPECT_EQ(s.submit(first, blocks(first, per, bb, 3), n), 2u);
    const auto now = s.load({{0, n}});
    const auto want3 = blocks(0, n, bb, 3);
    ASSERT_EQ(now.size(), want3.size());
    EXPECT_EQ(std::memcmp(now.data(), want3.data(), now.size()), 0);
}

std::string ids(std::uint64_t a, std::uint64_t b) {
    return "ids [" + std::to_string(a) + ", " + std::to_string(b) + ")";
}
}  // namespace

// Rank 1 leaves out the first 5 ids of its share.
TEST(StoreSubmitFit, AGapIsRefusedEverywhere) {
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    const std::uint64_t from = me() == 1 ? first + 5 : first;
    refused_then_usable(from, first + per, ids(per, per + 5) + " were submitted by no rank", 501);
}

// Rank 0 submits 3 ids of rank 1's share as well.
TEST(StoreSubmitFit, AnOverlapIsRefusedEverywhere) {
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    const std::uint64_t to = me() == 0 ? first + per + 3 : first + per;
    refused_then_usable(first, to, ids(per, per + 3) + " were submitted by ranks 0 and 1", 502);
}

// The last rank's share moves 4 ids down: the counts add up to the total,
// yet 4 ids are submitted twice and the last 4 by nobody. The first gap and
// the first overlap are named.
TEST(StoreSubmitFit, AGapAndAnOverlapWhoseCountsAddUpAreRefusedEverywhere) {
    const int last = ranks() - 1;
    const std::uint64_t first = per * static_cast<std::uint64_t>(me()) - (me() == last ? 4 : 0);
    const std::uint64_t start = per * static_cast<std::uint64_t>(last);
    refused_then_usable(first, first + per,
                        ids(total() - 4, total()) + " were submitted by no rank; " + ids(start - 4, start) +
                            " were submitted by ranks " + std::to_string(last - 1) + " and " + std::to_string(last),
                        503);
}

// With two gaps (and, on 3 or more ranks, overlaps), the first of each is
// named: rank 0 leaves out its last 2 ids, rank 1 takes 3 of rank 2's, rank
// 3 takes 2 of rank 2's, and the last rank leaves out the last id.
TEST(StoreSubmitFit, TheFirstGapAndOverlapAreNamed) {
    const int last = ranks() - 1;
    const std::uint64_t first = per * static_cast<std::uint64_t>(me());
    std::uint64_t from = first, to = first + per;
    if (me() == 0) to -= 2;
    if (me() == 1 && last >= 2) to += 3;
    if (me() == 3) from -= 2;
    if (me() == last) to -= 1;
    std::string expected = ids(per - 2, per) + " were submitted by no rank";
    if (last >= 2) expected += "; " + ids(2 * per, 2 * per + 3) + " were submitted by ranks 1 and 2";
    refused_then_usable(from, to, expected, 504);
}

// A rank whose own arguments are wrong throws invalid_argument; the others
// refuse the version naming it; nobody waits for ever.
TEST(StoreSubmitFit, ARankWithInvalidArgumentsIsNamed) {
    rs::store s(bb);
    const std::uint64_t first = per * static_cast<std::uint64_t>(me()), n = total();
    ASSERT_EQ(s.submit(first, blocks(first, per, bb, 1), n), 1u);
    auto mine = blocks(first, per, bb, 2);
    if (me() == 1) mine.pop_back();  // not a whole number of blocks
    if (me() == 1) {
        EXPECT_THROW(s.submit(first, mine, n), rampart::invalid_argument);
    } else {
        try {
            s.submit(first, mine, n);
            ADD_FAILURE() << "a version with an invalid part was accepted";
        } catch (const rs::store_error& e) {
            EXPECT_NE(std::string(e.what()).find("rank 1 passed invalid arguments"), std::string::npos) << e.what();
            EXPECT_FALSE(e.by_failures());
        }
    }
    EXPECT_EQ(s.version(), 1u);
    EXPECT_EQ(s.submit(first, blocks(first, per, bb, 3), n), 2u);
}
