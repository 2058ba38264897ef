// Ranks die (real SIGKILL) at one step of a submit's commit protocol; every
// survivor must decide the same version and load it byte for byte, and a
// version that any rank's submit returned must never be abandoned.
//
// A scenario is (STEP, victims, r): STEP is "returned" (the victims die the
// moment their submit returns) or a step of the protocol
// (rampart/store/detail/kill_hook.hpp), where the store's test hook kills
// them. Run: mpiexec -n 4 test_store_submit_crash --gtest_filter=*/puts_2_killed_r3
//
// Version 1 is submitted by all; the victims die during the submit of
// version 2. Each survivor waits (with a deadline) until the runtime has
// reported exactly the victims lost, checks the version it sees against what
// the step allows, loads every block and compares it with the submitted
// bytes, then submits version 3 of all blocks among the survivors and loads
// it back. It prints "rank R: agreed on version V" (compared across the
// survivors by same_lines.sh).
#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/detail/kill_hook.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

namespace {

struct scenario {
    std::string step;
    std::vector<int> victims;  // sorted
    int replicas;
};

std::string name_of(const ::testing::TestParamInfo<scenario>& info) {
    return info.param.step + "_" + std::to_string(info.param.victims.size()) + "_killed_r" +
           std::to_string(info.param.replicas);
}

// What the step allows of the version the survivors keep.
void check_version(const scenario& sc, std::uint64_t v, std::uint64_t returned) {
    if (returned != 0) {
        EXPECT_EQ(v, returned) << "its own submit returned a version that is not kept";
    }
    if (sc.step == "returned") {
        EXPECT_EQ(v, 2u) << "a victim's submit returned version 2, yet it is abandoned";
    }
    if (sc.step == "begin" || sc.step == "puts") {
        EXPECT_EQ(v, 1u) << "a victim died before its copies were held, yet version 2 is kept";
    }
    EXPECT_TRUE(v == 1 || v == 2) << "version " << v;
}

// The store goes on: the survivors submit every block among themselves.
void submit_among_survivors(rs::store& s, const scenario& sc, std::uint64_t n, std::size_t bb, std::uint64_t v) {
    std::vector<int> alive;
    for (int q = 0; q < mpi_test::size(); ++q)
        if (!std::binary_search(sc.victims.begin(), sc.victims.end(), q)) alive.push_back(q);
    const auto k = static_cast<std::uint64_t>(alive.size());
    const auto i = static_cast<std::uint64_t>(std::find(alive.begin(), alive.end(), mpi_test::rank()) - alive.begin());
    const std::uint64_t from = n * i / k, to = n * (i + 1) / k;
    EXPECT_EQ(s.submit(from, store_test::blocks(from, to - from, bb, 3), n), v + 1)
        << "the submit after the failure did not make the next version";
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb, 3));
}

class StoreSubmitCrash : public ::testing::TestWithParam<scenario> {};

TEST_P(StoreSubmitCrash, SurvivorsAgreeAndKeepWhatWasReturned) {
    const scenario& sc = GetParam();
    const int me = mpi_test::rank(), p = mpi_test::size();
    const bool victim = std::binary_search(sc.victims.begin(), sc.victims.end(), me);
    if (victim && sc.step != "returned") rs::detail::kill_during_submit(sc.step, 2);
    const std::size_t bb = 64;
    const std::uint64_t per = 2048, n = per * static_cast<std::uint64_t>(p),
                        first = per * static_cast<std::uint64_t>(me);
    rs::store s(bb, {.replicas = sc.replicas});
    ASSERT_EQ(s.submit(first, store_test::blocks(first, per, bb, 1), n), 1u);
    std::uint64_t returned = 0;
    try {
        returned = s.submit(first, store_test::blocks(first, per, bb, 2), n);
    } catch (const rs::store_error& e) {
        std::printf("rank %d: %s\n", me, e.what());
        EXPECT_TRUE(e.by_failures()) << e.what();
    }
    if (victim) {
        ASSERT_EQ(sc.step, "returned") << "the victim outlived step " << sc.step;
        std::printf("rank %d: dies after its submit returned version %llu\n", me,
                    static_cast<unsigned long long>(returned));
        mpi_test::kill_ranks({me});
    }
    // The fault really happened: the runtime reports exactly the victims lost.
    ASSERT_EQ(mpi_test::wait_for_lost(sc.victims.size()), sc.victims);
    const std::uint64_t v = s.version();
    check_version(sc, v, returned);
    EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb, v));
    std::printf("rank %d: agreed on version %llu, all %llu blocks equal\n", me, static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(n));
    submit_among_survivors(s, sc, n, bb, v);
}

std::vector<scenario> every_scenario() {
    std::vector<scenario> all;
    for (const char* step : {"begin", "puts", "stored_partial", "stored", "ready_partial", "ready", "returned"})
        for (int r : {3, 4})
            for (const auto& victims : {std::vector<int>{1}, std::vector<int>{0, 2}}) all.push_back({step, victims, r});
    return all;
}

INSTANTIATE_TEST_SUITE_P(Steps, StoreSubmitCrash, ::testing::ValuesIn(every_scenario()), name_of);

}  // namespace
