// Restoring the replication level, then more failures (real SIGKILLs, no
// spare ranks). Four ranks hold two copies of every block: copies of the
// blocks first held by rank 1 live on ranks 1 and 3. Rank 1 dies; the store
// copies those blocks to rank 2 (the next living rank after 1), by itself
// after the recovery (Auto) or in restore_replication (Explicit); then rank 3
// dies too. Without the repair those blocks would be lost; with it the two
// survivors load every block back, byte for byte.
#include <rampart/comm/comm.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

namespace {

void repair_then_survive(bool explicit_call) {
    ASSERT_EQ(mpi_test::size(), 4);
    const int me = mpi_test::rank();
    rs::options o;
    o.replicas = 2;
    const std::size_t bb = 64;
    const std::uint64_t per = 1000, n = per * 4, first = per * static_cast<std::uint64_t>(me);
    rs::store s(bb, o);
    s.submit(first, store_test::blocks(first, per, bb), n);
    s.load(std::span<const rs::id_range>{});  // everyone holds every copy
    mpi_test::kill_ranks({1});
    EXPECT_EQ(mpi_test::wait_for_lost(1), std::vector<int>{1});  // the store has seen the recovery too
    std::uint64_t repaired = explicit_call ? s.restore_replication() : 0;
    // Collective: over on a rank only after every rank's store messages sent
    // before it (the repairs among them) have arrived.
    s.load(std::span<const rs::id_range>{});
    if (!explicit_call) repaired = s.counters().blocks_repaired;
    if (me == 3) {
        std::printf("rank 3: %llu blocks sent to restore copies\n", static_cast<unsigned long long>(repaired));
        mpi_test::kill_ranks({3});
    }
    EXPECT_EQ(mpi_test::wait_for_lost(2), (std::vector<int>{1, 3}));
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb));
    std::printf("rank %d: repaired, then survived another failure: %llu blocks equal\n", me,
                static_cast<unsigned long long>(n));
}

}  // namespace

TEST(StoreRepair, Auto) { repair_then_survive(false); }
TEST(StoreRepair, Explicit) { repair_then_survive(true); }
