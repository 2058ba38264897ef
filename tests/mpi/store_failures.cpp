// The store after real failures (SIGKILL, no spare ranks: shrinking). Every
// rank submits its share; the ranks named on the command line die; every
// survivor then loads all blocks. Usage: store_failures R RANGE_BYTES
// [stopped] DEAD... With "stopped" the dead first stop (SIGSTOP) and are
// killed only while the survivors load: gets sent to them wait for an answer
// that never comes, and must be asked elsewhere after the recovery.
// With a copy of every block left, each survivor checks the bytes and prints
// "store survived"; when every copy of some blocks is gone it checks that
// load names exactly those blocks and prints "store lost exactly".
#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/store.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>

#include "store_data.hpp"

namespace rs = rampart::store;

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the test log even if the run hangs later
    rampart::runtime rt(1);
    const int me = rampart::comm::rank(), p = rampart::comm::size();
    if (argc < 4) return 2;
    rs::options o;
    o.replicas = std::atoi(argv[1]);
    o.permutation_range_bytes = std::strtoull(argv[2], nullptr, 10);
    o.seed = 5;
    const bool stopped = std::strcmp(argv[3], "stopped") == 0;
    std::vector<int> dead;
    for (int i = stopped ? 4 : 3; i < argc; ++i) dead.push_back(std::atoi(argv[i]));
    const auto is_dead = [&](int q) { return std::find(dead.begin(), dead.end(), q) != dead.end(); };
    const std::size_t bb = 64;
    // Stopped holders: 4 MiB per rank, so that each survivor's load is cut
    // into several slices, each asked of a random holder (some of them
    // stopped, all but surely).
    const std::uint64_t per = stopped ? 65536 : 2048, n = per * static_cast<std::uint64_t>(p);
    // Every rank's process id, for the killer below.
    std::vector<rampart::future<void>> sent;
    for (int q = 0; q < p; ++q)
        if (q != me) sent.push_back(rampart::comm::isend(q, 1, static_cast<long>(::getpid())));
    std::vector<long> pids(static_cast<std::size_t>(p), static_cast<long>(::getpid()));
    for (int q = 0; q < p; ++q)
        if (q != me) pids[static_cast<std::size_t>(q)] = rampart::comm::irecv<long>(q, 1).get();
    for (auto& f : sent) f.get();
    rs::store s(bb, o);
    const std::uint64_t first = per * static_cast<std::uint64_t>(me);
    s.submit(first, store_test::blocks(first, per, bb), n);
    // An empty load first: once it is over on a rank, every rank has ended
    // its submit and holds its copies.
    s.load(std::span<const rs::id_range>{});
    std::printf("rank %d: submitted\n", me);
    // The dead die together: the last of them kills the others and itself
    // within microseconds, before any recovery could let a survivor restore
    // copies from one of them.
    if (stopped) {
        int first_survivor = 0;
        while (is_dead(first_survivor)) ++first_survivor;
        if (is_dead(me)) {
            // Stops only once every survivor is past the empty load (so has
            // this rank's part of it): a stopped rank answers nothing more.
            for (int q = 0; q < p; ++q)
                if (!is_dead(q)) rampart::comm::irecv<int>(q, 2).get();
            std::raise(SIGSTOP);  // until killed
        }
        for (int d : dead) rampart::comm::isend(d, 2, 1).get();
        if (me == first_survivor)
            std::thread([&dead, pids] {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                for (int d : dead) ::kill(pids[static_cast<std::size_t>(d)], SIGKILL);
            }).detach();
    } else if (!dead.empty() && me == dead.back()) {
        for (int d : dead)
            if (d != me) ::kill(pids[static_cast<std::size_t>(d)], SIGKILL);
        std::raise(SIGKILL);
    }
    if (!stopped) {
        // The load must come after the failures: a holder that is still
        // alive when asked answers, and its blocks are then not lost.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!is_dead(me) && rampart::recovery::lost_ranks().size() < dead.size() &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (is_dead(me))
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until killed

    // Which blocks have no surviving holder, by the placement every rank knows.
    rs::placement where(n, p, s.replicas(), o.permutation_range_bytes / bb, o.seed);
    std::vector<rs::id_range> expect_lost;
    for (const auto& u : where.units(0, n)) {
        bool any = false;
        for (int k = 0; k < s.replicas(); ++k)
            any |= std::find(dead.begin(), dead.end(), where.holder_of_copy(u.first_holder, k)) == dead.end();
        if (any) continue;
        if (!expect_lost.empty() && expect_lost.back().first + expect_lost.back().count == u.first_id)
            expect_lost.back().count += u.count;
        else
            expect_lost.push_back({u.first_id, u.count});
    }
    try {
        auto got = s.load({{0, n}});
        const auto want = store_test::blocks(0, n, bb);
        if (!expect_lost.empty() || got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size())) {
            std::printf("rank %d: wrong bytes after the failures\n", me);
            return 1;
        }
        std::printf("rank %d: store survived %zu failures: %llu blocks equal, %llu requests re-routed\n", me, dead.size(),
                    static_cast<unsigned long long>(n),
                    static_cast<unsigned long long>(s.counters().requests_rerouted));
    } catch (const rs::store_error& e) {
        bool same = e.lost().size() == expect_lost.size();
        for (std::size_t i = 0; same && i < expect_lost.size(); ++i)
            same = e.lost()[i].first == expect_lost[i].first && e.lost()[i].count == expect_lost[i].count;
        if (!same || expect_lost.empty()) {
            std::printf("rank %d: unexpected: %s\n", me, e.what());
            return 1;
        }
        std::printf("rank %d: store lost exactly %zu ranges: %s\n", me, expect_lost.size(), e.what());
    }
    return 0;
}
