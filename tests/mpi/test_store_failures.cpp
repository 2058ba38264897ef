// The store after real failures (SIGKILL, no spare ranks: shrinking). Every
// rank submits its share; the scenario's ranks die; every survivor then loads
// all blocks. In the "stopped" scenarios the dead first stop (SIGSTOP) and
// are killed only while the survivors load: gets sent to them wait for an
// answer that never comes, and must be asked elsewhere after the recovery.
// With a copy of every block left, each survivor checks the bytes and prints
// "store survived"; when every copy of some blocks is gone it checks that
// load names exactly those blocks and prints "store lost exactly".
// Run: mpiexec -n RANKS test_store_failures --gtest_filter='*/one_failure'
#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/placement.hpp>
#include <rampart/store/store.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "store_data.hpp"

namespace rs = rampart::store;

namespace {

struct scenario {
    std::string name;
    int replicas;
    std::uint64_t range_bytes;
    bool stopped;  // the dead stop first and are killed during the loads
    std::vector<int> dead;
};

bool is_dead(const scenario& s, int q) { return std::find(s.dead.begin(), s.dead.end(), q) != s.dead.end(); }

// Every rank's process id, for the killer.
std::vector<long> exchange_pids() {
    const int me = mpi_test::rank(), p = mpi_test::size();
    std::vector<rampart::future<void>> sent;
    for (int q = 0; q < p; ++q)
        if (q != me) sent.push_back(rampart::comm::isend(q, 1, static_cast<long>(::getpid())));
    std::vector<long> pids(static_cast<std::size_t>(p), static_cast<long>(::getpid()));
    for (int q = 0; q < p; ++q)
        if (q != me) pids[static_cast<std::size_t>(q)] = rampart::comm::irecv<long>(q, 1).get();
    for (auto& f : sent) f.get();
    return pids;
}

// The dead die together: the last of them kills the others and itself within
// microseconds, before any recovery could let a survivor restore copies from
// one of them. Survivors return once the runtime reports them lost (a holder
// still alive when asked answers, and its blocks are then not lost).
void kill_together(const scenario& s, const std::vector<long>& pids) {
    const int me = mpi_test::rank();
    if (me == s.dead.back()) {
        for (int d : s.dead)
            if (d != me) ::kill(pids[static_cast<std::size_t>(d)], SIGKILL);
        mpi_test::kill_ranks({me});
    }
    if (is_dead(s, me))
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until killed
    mpi_test::wait_for_lost(s.dead.size());
}

// The dead stop once every survivor is past the empty load (so has their part
// of it): a stopped rank answers nothing more. The first survivor kills them
// 300 ms later, while the loads wait for their answers.
void stop_then_kill(const scenario& s, const std::vector<long>& pids) {
    const int me = mpi_test::rank(), p = mpi_test::size();
    if (is_dead(s, me)) {
        for (int q = 0; q < p; ++q)
            if (!is_dead(s, q)) rampart::comm::irecv<int>(q, 2).get();
        std::raise(SIGSTOP);  // until killed
    }
    for (int d : s.dead) rampart::comm::isend(d, 2, 1).get();
    int first_survivor = 0;
    while (is_dead(s, first_survivor)) ++first_survivor;
    if (me == first_survivor)
        std::thread([dead = s.dead, pids] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            for (int d : dead) ::kill(pids[static_cast<std::size_t>(d)], SIGKILL);
        }).detach();
}

// Which blocks have no surviving holder, by the placement every rank knows.
std::vector<rs::id_range> lost_blocks(const scenario& s, std::uint64_t n, std::size_t bb, std::uint64_t seed) {
    rs::placement where(n, mpi_test::size(), s.replicas, s.range_bytes / bb, seed);
    std::vector<rs::id_range> lost;
    for (const auto& u : where.units(0, n)) {
        bool any = false;
        for (int k = 0; k < s.replicas; ++k) any |= !is_dead(s, where.holder_of_copy(u.first_holder, k));
        if (any) continue;
        if (!lost.empty() && lost.back().first + lost.back().count == u.first_id)
            lost.back().count += u.count;
        else
            lost.push_back({u.first_id, u.count});
    }
    return lost;
}

class StoreFailures : public ::testing::TestWithParam<scenario> {};

TEST_P(StoreFailures, SurvivorsLoadEveryBlockOrNameTheLostOnes) {
    const scenario& sc = GetParam();
    const int me = mpi_test::rank(), p = mpi_test::size();
    const std::size_t bb = 64;
    // Stopped holders: 4 MiB per rank, so that each survivor's load is cut
    // into several slices, each asked of a random holder (some of them
    // stopped, all but surely).
    const std::uint64_t per = sc.stopped ? 65536 : 2048, n = per * static_cast<std::uint64_t>(p);
    const auto pids = exchange_pids();
    rs::store s(bb, {.replicas = sc.replicas, .permutation_range_bytes = sc.range_bytes, .seed = 5});
    const std::uint64_t first = per * static_cast<std::uint64_t>(me);
    s.submit(first, store_test::blocks(first, per, bb), n);
    s.load(std::span<const rs::id_range>{});  // over on a rank: every rank holds its copies
    std::printf("rank %d: submitted\n", me);
    if (sc.stopped)
        stop_then_kill(sc, pids);
    else
        kill_together(sc, pids);
    const auto expect_lost = lost_blocks(sc, n, bb, 5);
    try {
        EXPECT_BYTES_EQ(s.load({{0, n}}), store_test::blocks(0, n, bb));
        ASSERT_TRUE(expect_lost.empty()) << "blocks with no surviving copy were loaded";
        std::printf("rank %d: store survived %zu failures: %llu blocks equal, %llu requests re-routed\n", me,
                    sc.dead.size(), static_cast<unsigned long long>(n),
                    static_cast<unsigned long long>(s.counters().requests_rerouted));
    } catch (const rs::store_error& e) {
        ASSERT_FALSE(expect_lost.empty()) << "unexpected: " << e.what();
        ASSERT_EQ(e.lost().size(), expect_lost.size()) << e.what();
        for (std::size_t i = 0; i < expect_lost.size(); ++i) {
            EXPECT_EQ(e.lost()[i].first, expect_lost[i].first);
            EXPECT_EQ(e.lost()[i].count, expect_lost[i].count);
        }
        std::printf("rank %d: store lost exactly %zu ranges: %s\n", me, expect_lost.size(), e.what());
    }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, StoreFailures,
                         ::testing::Values(scenario{"one_failure", 4, 0, false, {2}},
                                           scenario{"two_failures_one_group", 4, 4096, false, {1, 3}},
                                           scenario{"r_minus_1_failures", 4, 0, false, {0, 1, 3}},
                                           scenario{"holder_dies_during_load", 2, 0, true, {2}},
                                           scenario{"two_holders_die_during_load", 3, 0, true, {1, 4}},
                                           scenario{"all_copies_lost", 2, 0, false, {0, 2}},
                                           scenario{"all_copies_lost_permuted", 2, 8192, false, {1, 4}}),
                         [](const ::testing::TestParamInfo<scenario>& info) { return info.param.name; });

}  // namespace
