// Distributed arrays without failures: put, get, acc and read_inc on 1-D and
// 2-D arrays from every rank, the barrier, bad input. Every rank checks the
// whole array against values computed alike everywhere.
// Run: mpiexec -n 4 test_pgas
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/barrier.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness.hpp"

namespace pg = rampart::pgas;

namespace {

double value(std::int64_t i, std::int64_t j) { return static_cast<double>(i * 1000 + j) * 0.5 + 0.25; }

std::vector<double> values(const pg::patch& p) {
    std::vector<double> v;
    for (auto i = p.lo[0]; i < p.hi[0]; ++i)
        for (auto j = p.lo[1]; j < p.hi[1]; ++j) v.push_back(value(i, j));
    return v;
}

}  // namespace

TEST(Pgas, PutThenGetEverywhere1D) {
    pg::array<double> a("one_d", 1003);
    const int me = mpi_test::rank(), p = mpi_test::size();
    // Each rank writes a stripe that crosses block boundaries.
    for (std::int64_t first = me * 7; first < 1003; first += p * 7) {
        const auto q = pg::patch::range(first, std::min<std::int64_t>(first + 7, 1003));
        a.put(q, values(q));
    }
    a.sync();
    const auto whole = a.layout().whole();
    EXPECT_EQ(mpi_test::byte_difference_of(a.get(whole).get(), values(whole)), "");
    EXPECT_EQ(a.differing_copies(), std::vector<int>{});
    a.destroy();
}

TEST(Pgas, PutThenGetEverywhere2D) {
    pg::array<double> a("two_d", 37, 23);
    const int me = mpi_test::rank(), p = mpi_test::size();
    for (std::int64_t i = me; i < 37; i += p) {
        const pg::patch row{{i, 0}, {i + 1, 23}};
        a.put(row, values(row));
    }
    a.sync();
    const pg::patch tile{{5, 3}, {30, 20}};
    std::vector<double> got(static_cast<std::size_t>(tile.elements()));
    a.get(tile, std::span<double>(got));
    EXPECT_EQ(mpi_test::byte_difference_of(got, values(tile)), "");
    EXPECT_EQ(mpi_test::byte_difference_of(a.get(a.layout().whole()).get(), values(a.layout().whole())), "");
    EXPECT_EQ(a.differing_copies(), std::vector<int>{});
}

TEST(Pgas, AccFromEveryRankAddsUp) {
    pg::array<std::int64_t> a("acc", 20, 20);
    const int p = mpi_test::size();
    const pg::patch all = a.layout().whole();
    std::vector<std::int64_t> ones(static_cast<std::size_t>(all.elements()), 1);
    for (int round = 0; round < 10; ++round) a.acc(all, ones, 3);
    a.sync();
    std::vector<std::int64_t> want(ones.size(), 30 * p);
    EXPECT_EQ(a.get(all).get(), want);
}

TEST(Pgas, ReadIncHandsOutEveryTicketOnce) {
    pg::array<long> counter("counter", 1);
    pg::array<int> taken("taken", 400);
    for (long t; (t = counter.read_inc(0, 1)) < 400;) taken.acc(pg::patch::range(t, t + 1), std::vector<int>{1}, 1);
    taken.sync();
    EXPECT_EQ(taken.get(pg::patch::range(0, 400)).get(), std::vector<int>(400, 1));
    EXPECT_EQ(counter.get(pg::patch::element(0)).get().at(0), 400 + mpi_test::size());
}

TEST(Pgas, EveryBlockHasAShadowOnAnotherRank) {
    pg::array<double> a("shadows", 100, 100);
    for (int b = 0; b < a.layout().blocks(); ++b) {
        const auto h = a.holders(b);
        EXPECT_EQ(h[0], b);
        if (mpi_test::size() > 1) {
            EXPECT_GE(h[1], 0);
            EXPECT_NE(h[1], h[0]);
        }
    }
}

TEST(Pgas, BarrierManyTimes) {
    for (int i = 0; i < 200; ++i) pg::barrier();
}

TEST(Pgas, BadInputIsRefusedAndWritesNothing) {
    pg::array<double> a("bad", 10, 10);
    const pg::patch all = a.layout().whole();
    a.put(all, std::vector<double>(100, 1.0));
    a.sync();
    EXPECT_THROW(a.put({{0, 0}, {11, 10}}, std::vector<double>(110, 2.0)), rampart::invalid_argument);
    EXPECT_THROW(a.put({{0, 0}, {2, 2}}, std::vector<double>(5, 2.0)), rampart::invalid_argument);
    EXPECT_THROW(a.put({{3, 3}, {3, 5}}, std::vector<double>{}), rampart::invalid_argument);
    std::vector<double> small(3);
    EXPECT_THROW(a.get({{0, 0}, {2, 2}}, std::span<double>(small)), rampart::invalid_argument);
    EXPECT_THROW(a.get({{-1, 0}, {2, 2}}), rampart::invalid_argument);
    pg::array<double> other("other", 10, 11);
    EXPECT_THROW(pg::copy(a, other), rampart::invalid_argument);
    a.sync();
    EXPECT_EQ(a.get(all).get(), std::vector<double>(100, 1.0));
    a.destroy();
    EXPECT_THROW(a.get(all), rampart::invalid_argument);
    EXPECT_THROW(a.put(all, std::vector<double>(100, 1.0)), rampart::invalid_argument);
    EXPECT_THROW(a.destroy(), rampart::invalid_argument);
}
