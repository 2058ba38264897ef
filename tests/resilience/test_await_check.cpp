#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace rampart;

namespace {
// A block with an ABFT checksum: the sum of its values is kept alongside, so
// a single corrupted value can be found and repaired... when we know where.
struct block {
    std::vector<long> values;
    long checksum = 0;
    friend bool operator==(const block&, const block&) = default;
};
bool consistent(const block& b) { return std::accumulate(b.values.begin(), b.values.end(), 0L) == b.checksum; }
}  // namespace

TEST(AwaitCheck, PassingCheckDeliversResult) {
    reset_counters();
    promise<int> p;
    auto out = p.get_future();
    auto done =
        async_await_check([](auto a, auto b) { return a.get() + b.get(); }, std::move(p),
                          [](const int& v) { return v == 5; }, async([] { return 2; }), async([] { return 3; }));
    done.get();
    EXPECT_EQ(out.get(), 5);
    EXPECT_EQ(read_counters().replays, 0u);
}

TEST(AwaitCheck, CorrectionRepairsInsteadOfReplay) {
    reset_counters();
    auto calls = std::make_shared<std::atomic<int>>(0);
    promise<block> p;
    auto out = p.get_future();
    async_await_check(
        [calls](auto in) {
            ++*calls;
            block b{in.get(), 0};
            b.checksum = std::accumulate(b.values.begin(), b.values.end(), 0L);
            b.values[3] ^= 1L << 40;  // corruption after the checksum was taken
            return b;
        },
        std::move(p), consistent,
        [](block& b) {
            // ABFT repair: the checksum tells what the corrupted element must be.
            long others = std::accumulate(b.values.begin(), b.values.end(), 0L) - b.values[3];
            b.values[3] = b.checksum - others;
            return true;
        },
        make_ready_future(std::vector<long>{1, 2, 3, 4, 5}));
    block b = out.get();
    EXPECT_EQ(b.values, (std::vector<long>{1, 2, 3, 4, 5}));
    EXPECT_EQ(calls->load(), 1);
    auto c = read_counters();
    EXPECT_EQ(c.corrections_applied, 1u);
    EXPECT_EQ(c.validations_failed, 1u);
    EXPECT_EQ(c.replays, 0u);
}

TEST(AwaitCheck, FailedCorrectionReplays) {
    reset_counters();
    auto calls = std::make_shared<std::atomic<int>>(0);
    promise<int> p;
    auto out = p.get_future();
    async_await_check([calls] { return calls->fetch_add(1); }, std::move(p), [](const int& v) { return v == 1; },
                      [](int&) { return false; });
    EXPECT_EQ(out.get(), 1);
    EXPECT_EQ(read_counters().replays, 1u);
    EXPECT_EQ(read_counters().corrections_applied, 0u);
}

TEST(AwaitCheck, ReplayFormAndExhaustion) {
    promise<int> p;
    auto out = p.get_future();
    async_await_check(
        2, [] { return 1; }, std::move(p), [](const int&) { return false; }, [](int&) { return false; });
    try {
        out.get();
        FAIL();
    } catch (const replay_exhausted& e) {
        EXPECT_EQ(e.attempts(), 2u);
    }
    promise<int> q;
    auto out2 = q.get_future();
    auto calls = std::make_shared<std::atomic<int>>(0);
    async_await_check(
        [calls] {
            if (calls->fetch_add(1) == 0) throw std::runtime_error("crash in task");
            return 4;
        },
        std::move(q), [](const int& v) { return v == 4; });
    EXPECT_EQ(out2.get(), 4);
}

TEST(AwaitCheck, ReplicationFormOutvotesCorruption) {
    reset_counters();
    promise<long> p;
    auto out = p.get_future();
    async_await_check([] { return this_task::replica() == 0 ? 666L : 42L; }, std::move(p));
    EXPECT_EQ(out.get(), 42L);
    auto c = read_counters();
    EXPECT_EQ(c.replicas_launched, 3u);
    EXPECT_EQ(c.votes_lost, 1u);
}

TEST(AwaitCheck, ReplicationFormAgreeingCopiesRunTwice) {
    reset_counters();
    promise<int> p;
    auto out = p.get_future();
    async_await_check([](auto x) { return x.get() * 2; }, std::move(p), make_ready_future(21));
    EXPECT_EQ(out.get(), 42);
    EXPECT_EQ(read_counters().replicas_launched, 2u);
}

TEST(AwaitCheck, ZeroAttemptsIsInvalid) {
    promise<int> p;
    EXPECT_THROW(async_await_check(
                     0, [] { return 1; }, std::move(p), [](const int&) { return true; }, [](int&) { return true; }),
                 rampart::invalid_argument);
}
