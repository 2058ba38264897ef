#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace rampart;

TEST(Async, RunsWithArguments) {
    auto f = async([](int a, std::string b) { return b + std::to_string(a); }, 4, std::string("x"));
    EXPECT_EQ(f.get(), "x4");
}

TEST(Async, ExceptionGoesToFuture) {
    auto f = async([]() -> int { throw std::out_of_range("oops"); });
    EXPECT_THROW(f.get(), std::out_of_range);
}

TEST(Async, ManyTasks) {
    std::vector<future<int>> v;
    for (int i = 0; i < 10000; ++i) v.push_back(async([i] { return i; }));
    long sum = 0;
    for (auto& f : v) sum += f.get();
    EXPECT_EQ(sum, 10000L * 9999 / 2);
}

TEST(Async, WaitingTaskRunsOtherTasks) {
    // A chain of tasks each waiting on the next one: with two threads this
    // only finishes if waiting workers keep executing tasks.
    std::function<int(int)> chain = [&](int depth) -> int {
        if (depth == 0) return 0;
        return async(chain, depth - 1).get() + 1;
    };
    EXPECT_EQ(async(chain, 200).get(), 200);
}

TEST(Async, WaitInsideTaskResumesOnSameThreadContext) {
    auto f = async([] {
        auto id = std::this_thread::get_id();
        auto inner = async([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return 1;
        });
        int v = inner.get();
        return v + (id == std::this_thread::get_id() ? 0 : 100);
    });
    EXPECT_EQ(f.get(), 1);
}

TEST(Dataflow, RunsWhenInputsReady) {
    promise<int> p;
    auto a = p.get_future();
    auto b = async([] { return 2; });
    std::atomic<bool> ran{false};
    auto c = dataflow(
        [&](future<int> x, future<int> y, int z) {
            ran = true;
            return x.get() * y.get() + z;
        },
        std::move(a), std::move(b), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(ran.load());
    p.set_value(20);
    EXPECT_EQ(c.get(), 41);
}

TEST(Dataflow, VectorInputs) {
    std::vector<future<int>> v;
    for (int i = 1; i <= 10; ++i) v.push_back(async([i] { return i; }));
    auto s = dataflow(
        [](std::vector<future<int>> xs) {
            int t = 0;
            for (auto& x : xs) t += x.get();
            return t;
        },
        std::move(v));
    EXPECT_EQ(s.get(), 55);
}

TEST(Dataflow, ExceptionFromInputReachesFunction) {
    auto bad = async([]() -> int { throw std::runtime_error("input failed"); });
    auto c = dataflow([](future<int> x) { return x.get() + 1; }, std::move(bad));
    EXPECT_THROW(c.get(), std::runtime_error);
    auto handled = dataflow([](future<int> x) { return x.has_exception() ? -1 : x.get(); },
                            async([]() -> int { throw std::runtime_error("e"); }));
    EXPECT_EQ(handled.get(), -1);
}

TEST(Dataflow, EmptyInputIsAnError) {
    future<int> empty;
    EXPECT_THROW(dataflow([](future<int>) { return 0; }, std::move(empty)), future_error);
}

TEST(WhenAll, TupleAndVector) {
    auto t = when_all(async([] { return 1; }), async([] { return 2.5; })).get();
    EXPECT_EQ(std::get<0>(t).get(), 1);
    EXPECT_EQ(std::get<1>(t).get(), 2.5);
    std::vector<future<int>> v;
    for (int i = 0; i < 100; ++i) v.push_back(async([i] { return i; }));
    auto all = when_all(std::move(v)).get();
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(all[i].is_ready());
    EXPECT_EQ(when_all(std::vector<future<int>>{}).get().size(), 0u);
}

TEST(Finish, WaitsForNestedTasks) {
    std::atomic<int> n{0};
    finish([&] {
        for (int i = 0; i < 50; ++i)
            async([&] {
                for (int j = 0; j < 10; ++j) async([&] { ++n; });
            });
    });
    EXPECT_EQ(n.load(), 500);
}

TEST(Finish, WaitsForDataflowAndContinuations) {
    std::atomic<int> n{0};
    promise<int> p;
    std::thread setter;
    finish([&] {
        dataflow([&](future<int> x) { n += x.get(); }, p.get_future());
        async([] { return 1; }).then([&](future<int> x) { n += x.get(); });
        setter = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            p.set_value(10);
        });
    });
    EXPECT_EQ(n.load(), 11);
    setter.join();
}

TEST(Finish, BodyExceptionRethrownAfterWait) {
    std::atomic<int> n{0};
    EXPECT_THROW(finish([&] {
                     async([&] {
                         std::this_thread::sleep_for(std::chrono::milliseconds(5));
                         ++n;
                     });
                     throw std::runtime_error("body");
                 }),
                 std::runtime_error);
    EXPECT_EQ(n.load(), 1);
}

TEST(Runtime, SecondRuntimeIsAnError) { EXPECT_THROW(runtime second(1), std::logic_error); }

TEST(Counters, CountTasks) {
    reset_counters();
    async([] {}).get();
    dataflow([] {}).get();
    EXPECT_EQ(read_counters().tasks, 2u);
}
