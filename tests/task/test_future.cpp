#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace rampart;

TEST(Future, PromiseSetValueReachesFuture) {
    promise<int> p;
    auto f = p.get_future();
    EXPECT_FALSE(f.is_ready());
    p.set_value(7);
    EXPECT_TRUE(f.is_ready());
    EXPECT_EQ(f.get(), 7);
    EXPECT_FALSE(f.valid());
}

TEST(Future, ExceptionTravelsThroughFuture) {
    promise<std::string> p;
    auto f = p.get_future();
    p.set_exception(std::make_exception_ptr(std::runtime_error("bad")));
    EXPECT_TRUE(f.has_exception());
    EXPECT_THROW(f.get(), std::runtime_error);
}

TEST(Future, SecondSetValueIsAnError) {
    promise<int> p;
    p.set_value(1);
    EXPECT_THROW(p.set_value(2), future_error);
    auto f = p.get_future();
    EXPECT_THROW(p.get_future(), future_error);
    EXPECT_EQ(f.get(), 1);
}

TEST(Future, BrokenPromise) {
    future<int> f;
    {
        promise<int> p;
        f = p.get_future();
    }
    EXPECT_THROW(f.get(), future_error);
}

TEST(Future, EmptyFutureGetIsAnError) {
    future<int> f;
    EXPECT_THROW(f.get(), future_error);
    shared_future<int> s;
    EXPECT_THROW(s.get(), future_error);
}

TEST(Future, SharedFutureReadByMany) {
    auto s = async([] { return std::vector<int>(1000, 3); }).share();
    std::vector<future<int>> readers;
    for (int i = 0; i < 16; ++i)
        readers.push_back(async([s] { return static_cast<int>(s.get().size()) + s.get()[0]; }));
    for (auto& r : readers) EXPECT_EQ(r.get(), 1003);
    EXPECT_TRUE(s.valid());
}

TEST(Future, ThenRunsAfterReady) {
    auto f = async([] { return 20; }).then([](future<int> x) { return x.get() + 22; });
    EXPECT_EQ(f.get(), 42);
    auto g = make_ready_future(1).share().then([](shared_future<int> x) { return x.get() * 5; });
    EXPECT_EQ(g.get(), 5);
}

TEST(Future, SetFromAnotherThreadWakesExternalWaiter) {
    promise<int> p;
    auto f = p.get_future();
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        p.set_value(5);
    });
    EXPECT_EQ(f.get(), 5);
    t.join();
}

TEST(Future, VoidFutures) {
    std::atomic<int> n{0};
    auto f = async([&] { ++n; });
    f.get();
    EXPECT_EQ(n.load(), 1);
    make_ready_future().get();
    EXPECT_THROW(make_exceptional_future<void>(std::make_exception_ptr(std::logic_error("x"))).get(), std::logic_error);
}
