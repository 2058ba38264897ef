// Substituting recovery with the store (real SIGKILL, one spare): four ranks
// submit version 1 (two copies of each block); rank 1 dies; a spare takes
// its place, creates its store, which joins the survivors' (it learns which
// operations they have done and which version is complete), and all four
// submit version 2 (again, if the survivors' first try overlapped the
// failure and was abandoned) and load every block of it back, byte for byte.
// With "late" the survivors wait for the recovery before they submit, so
// that the replacement takes part in their first try.
// Run: RAMPART_SPARES=1 RAMPART_KILL=1@iter1 mpiexec -n 5 ... --gtest_filter=StoreSubstitute.Early (or .Late)
//
// AfterItsPart: rank 1 dies once its part of version 2 is stored everywhere
// ("stored"), so that the survivors are still deciding version 2 at the
// recovery and commit it after the replacement has joined them. The
// replacement skipped that submit, yet the next submit must have the same
// number on every rank, and load back whole. Prints "rank R: the next
// submit made version V" (compared across the ranks by same_lines.sh).
// Run: RAMPART_SPARES=1 mpiexec -n 5 ... --gtest_filter=StoreSubstitute.AfterItsPart
//
// MadeAfterALaterRecovery: rank 1's replacement makes its store only after a
// second recovery (rank 2 dies in its submit of version 2, which the
// survivors have begun and in which they wait for rank 1's part). It joins
// after that submit, so the survivors must not wait for its part of it.
// Run: RAMPART_SPARES=2 RAMPART_KILL=1@iter1 mpiexec -n 6 ... --gtest_filter=StoreSubstitute.MadeAfterALaterRecovery
//
// MadeLateByAFirstProcess: rank 3's first process makes its store only after
// a recovery in which the others had theirs (rank 1 died in their submit of
// version 1): it takes part from the first submit, as its program does.
// Run: RAMPART_SPARES=2 mpiexec -n 6 ... --gtest_filter=StoreSubstitute.MadeLateByAFirstProcess
#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/detail/kill_hook.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

namespace {

// Each rank's 700 blocks of 48 bytes, 2 copies of each.
struct layout {
    int me = mpi_test::rank(), p = mpi_test::size(), incarnation = mpi_test::incarnation();
    std::size_t bb = 48;
    std::uint64_t per = 700, n = per * static_cast<std::uint64_t>(p), first = per * static_cast<std::uint64_t>(me);
    rs::options two_copies() const {
        rs::options o;
        o.replicas = 2;
        return o;
    }
};

// Version 2 is submitted until it is complete (at most 3 tries: a try cut by
// the recovery is abandoned), then loaded back whole.
void substitute(bool late) {
    const layout l;
    const auto [me, p, incarnation, bb, per, n, first] = std::tuple(l.me, l.p, l.incarnation, l.bb, l.per, l.n, l.first);
    rs::store s(bb, l.two_copies());
    if (incarnation == 0) {
        s.submit(first, store_test::blocks(first, per, bb, 1), n);
        s.load(std::span<const rs::id_range>{});
        rampart::recovery::report_iteration(1);  // rank 1 dies here
        if (late) mpi_test::wait_for_recoveries(1);
    }
    int tries = 0;
    for (bool complete = false; !complete && tries < 3;) {
        ++tries;
        try {
            complete = s.submit(first, store_test::blocks(first, per, bb, 2), n) == 2;
        } catch (const rs::store_error& e) {
            std::printf("rank %d: %s\n", me, e.what());
        }
    }
    ASSERT_EQ(s.version(), 2u) << "version 2 not complete after 3 tries";
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb, 2));
    if (me == 1) {
        EXPECT_EQ(incarnation, 1) << "rank 1 was not replaced";
    }
    std::printf("rank %d (incarnation %d): version 2 complete after %d tries, %llu blocks equal\n", me, incarnation,
                tries, static_cast<unsigned long long>(n));
}

// Version 2 as the survivors decided it, the next one submitted by all four.
void substitute_after_its_part() {
    const layout l;
    const auto [me, p, incarnation, bb, per, n, first] = std::tuple(l.me, l.p, l.incarnation, l.bb, l.per, l.n, l.first);
    rs::store s(bb, l.two_copies());
    if (incarnation == 0) {
        s.submit(first, store_test::blocks(first, per, bb, 1), n);
        if (me == 1) rs::detail::kill_during_submit("stored", 2);
        try {
            s.submit(first, store_test::blocks(first, per, bb, 2), n);
        } catch (const rs::store_error& e) {
            std::printf("rank %d: %s\n", me, e.what());  // version 2 abandoned: rank 1's part was lost
        }
        mpi_test::wait_for_recoveries(1);
    }
    const std::uint64_t before = s.version();
    const std::uint64_t v = s.submit(first, store_test::blocks(first, per, bb, 3), n);
    if (incarnation == 0) {
        EXPECT_EQ(v, before + 1) << "a survivor's submit skipped a number";
    }
    EXPECT_EQ(s.version(), v);
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb, 3));
    if (me == 1) {
        EXPECT_EQ(incarnation, 1) << "rank 1 was not replaced";
    }
    if (incarnation == 1)
        std::printf("rank %d: learnt %llu newer version(s) from the survivors\n", me,
                    static_cast<unsigned long long>(s.counters().versions_learnt));
    std::printf("rank %d (incarnation %d): the next submit made version %llu\n", me, incarnation,
                static_cast<unsigned long long>(v));
}

// Submits `version` (at most 3 tries: a try cut by a recovery is abandoned),
// then loads it back whole.
void submit_until_complete(rs::store& s, const layout& l, std::uint64_t version) {
    int tries = 0;
    for (bool complete = false; !complete && tries < 3;) {
        ++tries;
        try {
            complete = s.submit(l.first, store_test::blocks(l.first, l.per, l.bb, version), l.n) == version;
        } catch (const rs::store_error& e) {
            std::printf("rank %d: %s\n", l.me, e.what());
            EXPECT_TRUE(e.by_failures()) << e.what();
        }
    }
    ASSERT_EQ(s.version(), version) << "version " << version << " not complete after 3 tries";
    EXPECT_BYTES_EQ(s.load({{0, l.n}}), store_test::blocks(0, l.n, l.bb, version));
    std::printf("rank %d (incarnation %d, %d tries): version %llu complete, %llu blocks equal\n", l.me, l.incarnation,
                tries, static_cast<unsigned long long>(version), static_cast<unsigned long long>(l.n));
}

void made_after_a_later_recovery() {
    const layout l;
    if (l.incarnation > 0) mpi_test::wait_for_recoveries(2);
    rs::store s(l.bb, l.two_copies());
    if (l.incarnation == 0) {
        s.submit(l.first, store_test::blocks(l.first, l.per, l.bb, 1), l.n);
        rampart::recovery::report_iteration(1);  // rank 1 dies here
        mpi_test::wait_for_recoveries(1);
        if (l.me == 2) {
            rs::detail::kill_during_submit("puts", 2);
            std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others have begun it
        }
    }
    submit_until_complete(s, l, 2);
    if (l.me == 1 || l.me == 2) {
        EXPECT_EQ(l.incarnation, 1) << "rank " << l.me << " was not replaced";
    }
}

void made_late_by_a_first_process() {
    const layout l;
    if (l.me == 3) mpi_test::wait_for_recoveries(1);
    rs::store s(l.bb, l.two_copies());
    if (l.me == 1 && l.incarnation == 0) {
        // At the start of its submit, so that its death waits for no answer from rank 3.
        rs::detail::kill_during_submit("begin", 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the others have begun it
    }
    submit_until_complete(s, l, 1);
    if (l.me == 1) {
        EXPECT_EQ(l.incarnation, 1) << "rank 1 was not replaced";
    }
}

}  // namespace

TEST(StoreSubstitute, MadeAfterALaterRecovery) { made_after_a_later_recovery(); }
TEST(StoreSubstitute, MadeLateByAFirstProcess) { made_late_by_a_first_process(); }
TEST(StoreSubstitute, Early) { substitute(false); }
TEST(StoreSubstitute, Late) { substitute(true); }
TEST(StoreSubstitute, AfterItsPart) { substitute_after_its_part(); }
