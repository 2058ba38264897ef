// Substituting recovery with the store (real SIGKILL, one spare): four ranks
// submit version 1 (two copies of each block); rank 1 dies; a spare takes
// its place, creates its store, which joins the survivors' (it learns which
// operations they have done and which version is complete), and all four
// submit version 2 (again, if the survivors' first try overlapped the
// failure and was abandoned) and load every block of it back, byte for byte.
// With "late" the survivors wait for the recovery before they submit, so
// that the replacement takes part in their first try.
// Run: RAMPART_SPARES=1 RAMPART_KILL=1@iter1 mpiexec -n 5 ... --gtest_filter=StoreSubstitute.Early (or .Late)
#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <cstdio>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

namespace {

// Version 2 is submitted until it is complete (at most 3 tries: a try cut by
// the recovery is abandoned), then loaded back whole.
void substitute(bool late) {
    const int me = mpi_test::rank(), p = mpi_test::size(), incarnation = mpi_test::incarnation();
    const std::size_t bb = 48;
    const std::uint64_t per = 700, n = per * static_cast<std::uint64_t>(p),
                        first = per * static_cast<std::uint64_t>(me);
    rs::options o;
    o.replicas = 2;
    rs::store s(bb, o);
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

}  // namespace

TEST(StoreSubstitute, Early) { substitute(false); }
TEST(StoreSubstitute, Late) { substitute(true); }
