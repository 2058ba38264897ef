// The window of a process's unconfirmed messages to one destination.
#include "../../src/replica/protocol/pending_sends.hpp"

#include <gtest/gtest.h>

namespace rd = rampart::replica::detail;

namespace {
std::vector<int> values(const rd::numbered_window<int>& w) {
    std::vector<int> out;
    w.for_each([&](const std::shared_ptr<int>& v) { out.push_back(*v); });
    return out;
}
}  // namespace

TEST(PendingSends, FindsByNumberFromWhereTheFirstWasAdded) {
    rd::numbered_window<int> w;
    EXPECT_TRUE(w.empty());
    w.add(7, std::make_shared<int>(70));
    w.add(8, std::make_shared<int>(80));
    EXPECT_EQ(*w.find(7), 70);
    EXPECT_EQ(*w.find(8), 80);
    EXPECT_EQ(w.find(6), nullptr);
    EXPECT_EQ(w.find(9), nullptr);
    EXPECT_FALSE(w.empty());
}

TEST(PendingSends, ErasedOutOfOrderTheRestStayInOrder) {
    rd::numbered_window<int> w;
    for (int n = 0; n < 5; ++n) w.add(static_cast<std::uint64_t>(n), std::make_shared<int>(n));
    w.erase(2);
    w.erase(2);   // twice: nothing more
    w.erase(40);  // never added
    EXPECT_EQ(values(w), (std::vector<int>{0, 1, 3, 4}));
    w.erase(0);
    w.erase(1);
    EXPECT_EQ(w.find(1), nullptr);
    EXPECT_EQ(*w.find(3), 3);
    EXPECT_EQ(w.list().size(), 2u);
    w.erase(4);
    w.erase(3);
    EXPECT_TRUE(w.empty());
    w.add(9, std::make_shared<int>(9));  // numbers go on where the sender is
    EXPECT_EQ(*w.find(9), 9);
    EXPECT_EQ(values(w), (std::vector<int>{9}));
}

TEST(PendingSends, AGapInTheNumbersHoldsNothing) {
    rd::numbered_window<int> w;
    w.add(1, std::make_shared<int>(1));
    w.add(4, std::make_shared<int>(4));
    EXPECT_EQ(w.find(2), nullptr);
    EXPECT_EQ(values(w), (std::vector<int>{1, 4}));
    w.erase(1);
    EXPECT_EQ(*w.find(4), 4);
    EXPECT_EQ(w.list().size(), 1u);
}
