#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

using namespace rampart;

TEST(Executors, ReplayExecutorWithAsyncAndDataflow) {
    reset_counters();
    auto exec = make_replay_executor(3);
    auto calls = std::make_shared<std::atomic<int>>(0);
    auto a = async(
        exec,
        [calls](int x) {
            if (calls->fetch_add(1) == 0) throw std::runtime_error("once");
            return x;
        },
        20);
    auto b = dataflow(
        exec, [](auto x, int y) { return x.get() + y; }, std::move(a), 22);
    EXPECT_EQ(b.get(), 42);
    EXPECT_EQ(read_counters().replays, 1u);
}

TEST(Executors, ReplayExecutorWithValidator) {
    auto exec = make_replay_executor(4, [](int v) { return v > 1; });
    auto calls = std::make_shared<std::atomic<int>>(0);
    EXPECT_EQ(async(exec, [calls] { return calls->fetch_add(1); }).get(), 2);
}

TEST(Executors, ReplicateExecutorVotes) {
    reset_counters();
    auto exec = make_replicate_executor(3, majority_vote{});
    auto f = async(exec, [] { return this_task::replica() == 2 ? -1 : 8; });
    EXPECT_EQ(f.get(), 8);
    EXPECT_EQ(read_counters().votes_lost, 1u);
    auto g = dataflow(
        exec, [](auto x) { return x.get() + 1; }, async([] { return 1; }));
    EXPECT_EQ(g.get(), 2);
}

TEST(Executors, ReplicateExecutorFirstValid) {
    auto exec = make_replicate_executor(2);
    EXPECT_EQ(async(exec, [] { return 3; }).get(), 3);
}

TEST(Executors, WholeAlgorithmMadeResilient) {
    // A reduction tree written once with async/dataflow, run through an executor.
    auto tree_sum = [](auto exec, int n) {
        std::vector<shared_future<long>> level;
        for (int i = 0; i < n; ++i) level.push_back(async(exec, [i] { return static_cast<long>(i); }).share());
        while (level.size() > 1) {
            std::vector<shared_future<long>> next;
            for (std::size_t i = 0; i + 1 < level.size(); i += 2)
                next.push_back(dataflow(
                                   exec, [](auto a, auto b) { return a.get() + b.get(); }, level[i], level[i + 1])
                                   .share());
            if (level.size() % 2) next.push_back(level.back());
            level = std::move(next);
        }
        return level[0].get();
    };
    EXPECT_EQ(tree_sum(make_replay_executor(2), 100), 4950);
    EXPECT_EQ(tree_sum(make_replicate_executor(3, majority_vote{}), 100), 4950);
}
