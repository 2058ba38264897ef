// Messages between ranks: round trips of many types and sizes, ordering,
// mismatches, malformed messages, duplicates, bad arguments, use from tasks.
// Each test uses its own tags, so leftovers of one test cannot reach another.
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <string>
#include <vector>

using namespace rampart;

namespace {

struct particle {
    double x, y, z;
    int id;
    friend bool operator==(const particle&, const particle&) = default;
};

// A type that needs cereal.
struct named_values {
    std::string name;
    std::map<std::string, std::vector<int>> values;
    template <class A>
    void serialize(A& ar) {
        ar(name, values);
    }
    friend bool operator==(const named_values&, const named_values&) = default;
};

int me() { return comm::rank(); }
int peers() { return comm::size(); }

// Rank 0 sends `value` to rank 1, which checks it and sends it back.
template <class T>
void round_trip(int tag, const T& value) {
    if (me() == 0) {
        comm::isend(1, tag, value).get();
        EXPECT_TRUE(comm::irecv<T>(1, tag).get() == value);
    } else if (me() == 1) {
        T got = comm::irecv<T>(0, tag).get();
        EXPECT_TRUE(got == value);
        comm::isend(0, tag, std::move(got)).get();
    }
}

}  // namespace

TEST(Comm, RanksAndSize) {
    EXPECT_GE(peers(), 2);
    EXPECT_GE(me(), 0);
    EXPECT_LT(me(), peers());
}

TEST(Comm, RoundTripOfTypes) {
    round_trip(100, 42);
    round_trip(101, 3.25);
    round_trip(102, particle{1.0, -2.0, 3.5, 7});
    round_trip(103, std::string("hello, ranks"));
    round_trip(104, std::string());
    round_trip(105, named_values{"grid", {{"a", {1, 2, 3}}, {"b", {}}}});
}

TEST(Comm, RoundTripOfSizes) {
    int tag = 200;
    // 32 and 33 doubles: the last payload that travels packed with its
    // envelope, and the first that travels through a two-block datatype.
    for (std::size_t n :
         {std::size_t{0}, std::size_t{1}, std::size_t{32}, std::size_t{33}, std::size_t{1000}, std::size_t{1} << 20}) {
        std::vector<double> v(n);
        std::iota(v.begin(), v.end(), 0.5);
        round_trip(tag++, v);
    }
    std::vector<char> big(std::size_t{64} << 20);  // 64 MiB
    for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i / 4096);
    round_trip(tag++, big);
    round_trip(tag++, std::vector<particle>{{1, 2, 3, 4}, {5, 6, 7, 8}});
}

TEST(Comm, OrderWithinAChannel) {
    const int n = 2000;
    if (me() == 0) {
        std::vector<future<void>> sent;
        for (int i = 0; i < n; ++i) sent.push_back(comm::isend(1, 300, i));
        wait_all(sent);
    } else if (me() == 1) {
        std::vector<future<int>> got;
        for (int i = 0; i < n; ++i) got.push_back(comm::irecv<int>(0, 300));
        for (int i = 0; i < n; ++i) ASSERT_EQ(got[i].get(), i);
    }
}

TEST(Comm, TypeMismatchIsAnError) {
    if (me() == 0) {
        comm::isend(1, 400, std::vector<double>{1, 2, 3}).get();
        comm::isend(1, 401, 7).get();
        comm::isend(1, 402, std::vector<double>{1, 2, 3}).get();
        comm::isend(1, 403, std::string("text")).get();
    } else if (me() == 1) {
        EXPECT_THROW(comm::irecv<std::vector<int>>(0, 400).get(), comm::message_error);
        EXPECT_THROW(comm::irecv<float>(0, 401).get(), comm::message_error);  // same size, other type
        try {
            comm::irecv<particle>(0, 402).get();
            FAIL() << "no error";
        } catch (const comm::message_error& e) {
            EXPECT_NE(std::string(e.what()).find("from rank 0 with tag 402"), std::string::npos) << e.what();
        }
        EXPECT_THROW(comm::irecv<named_values>(0, 403).get(), comm::message_error);
    }
}

TEST(Comm, MalformedMessagesAreErrors) {
    auto& e = comm::detail::engine::get();
    if (me() == 0) {
        promise<void> a, b;
        auto fa = a.get_future(), fb = b.get_future();
        e.post_raw(1, 500, 0, {}, std::string(10, 'x'), std::move(a));   // shorter than an envelope
        e.post_raw(1, 501, 0, {}, std::string(100, 'y'), std::move(b));  // not an envelope
        fa.get();
        fb.get();
    } else if (me() == 1) {
        auto before = e.counters().malformed;
        try {
            comm::irecv<int>(0, 500).get();
            FAIL();
        } catch (const comm::message_error& x) {
            EXPECT_NE(std::string(x.what()).find("less than the 48-byte envelope"), std::string::npos) << x.what();
        }
        try {
            comm::irecv<int>(0, 501).get();
            FAIL();
        } catch (const comm::message_error& x) {
            EXPECT_NE(std::string(x.what()).find("not a rampart envelope"), std::string::npos) << x.what();
        }
        EXPECT_EQ(e.counters().malformed, before + 2);
    }
}

TEST(Comm, DuplicatesAreDropped) {
    auto& e = comm::detail::engine::get();
    if (me() == 0) {
        std::vector<future<void>> sent;
        for (auto [seq, value] :
             {std::pair{0, 5}, std::pair{0, 99}, std::pair{1, 7}, std::pair{1, 98}, std::pair{2, 9}}) {
            promise<void> p;
            sent.push_back(p.get_future());
            e.post_raw(1, 600, static_cast<std::uint64_t>(seq), comm::detail::encode(int{value}), {}, std::move(p));
        }
        wait_all(sent);
    } else if (me() == 1) {
        auto before = e.counters().duplicates_dropped;
        EXPECT_EQ(comm::irecv<int>(0, 600).get(), 5);
        EXPECT_EQ(comm::irecv<int>(0, 600).get(), 7);
        EXPECT_EQ(comm::irecv<int>(0, 600).get(), 9);
        EXPECT_EQ(e.counters().duplicates_dropped, before + 2);
    }
}

TEST(Comm, BadArguments) {
    EXPECT_THROW(comm::isend(-1, 1, 5), rampart::invalid_argument);
    EXPECT_THROW(comm::isend(peers(), 1, 5), rampart::invalid_argument);
    EXPECT_THROW(comm::isend(0, -3, 5), rampart::invalid_argument);
    EXPECT_THROW(comm::irecv<int>(peers() + 4, 1), rampart::invalid_argument);
}

TEST(Comm, RingExchangeFromTasks) {
    // Every rank sends its rank around a ring from a task and receives in a
    // dataflow; 50 rounds, each depending on the previous one.
    const int n = peers(), right = (me() + 1) % n, left = (me() + n - 1) % n;
    shared_future<long> carried = make_ready_future(static_cast<long>(me())).share();
    for (int round = 0; round < 50; ++round) {
        auto sent = dataflow(
            [right, round](shared_future<long> v) { return comm::isend(right, 700 + round, v.get()).get(); }, carried);
        carried = dataflow(
                      [left, round](future<void> s) {
                          s.get();
                          return comm::irecv<long>(left, 700 + round).get();
                      },
                      std::move(sent))
                      .share();
    }
    // After 50 steps around a ring of n, the value came from rank (me - 50) mod n.
    EXPECT_EQ(carried.get(), ((me() - 50) % n + n) % n);
}
