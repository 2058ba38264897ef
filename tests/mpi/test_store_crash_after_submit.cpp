// A rank dies the moment its submit returns, while its "done" may still be
// on the way to the others: every survivor must still decide the same way
// on whether that version is complete, and load it (or the one before) back
// byte for byte. Prints "rank R: version V"; the test compares the lines.
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

TEST(StoreCrashAfterSubmit, SurvivorsAgreeOnTheVersion) {
    const int me = mpi_test::rank(), p = mpi_test::size();
    rs::options o;
    o.replicas = 2;
    const std::size_t bb = 32;
    const std::uint64_t per = 512, n = per * static_cast<std::uint64_t>(p),
                        first = per * static_cast<std::uint64_t>(me);
    rs::store s(bb, o);
    s.submit(first, store_test::blocks(first, per, bb, 1), n);
    try {
        s.submit(first, store_test::blocks(first, per, bb, 2), n);
    } catch (const rs::store_error& e) {
        std::printf("rank %d: %s\n", me, e.what());  // abandoned: version 1 stays
    }
    mpi_test::kill_ranks({1});
    EXPECT_EQ(mpi_test::wait_for_lost(1), std::vector<int>{1});
    const std::uint64_t v = s.version();
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb, v));
    std::printf("rank %d: now at version %llu\n", me, static_cast<unsigned long long>(v));
}
