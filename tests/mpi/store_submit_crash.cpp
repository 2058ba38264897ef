// Ranks die (real SIGKILL) at one step of a submit's commit protocol; every
// survivor must decide the same version and load it byte for byte, and a
// version that any rank's submit returned must never be abandoned.
//
// usage: store_submit_crash R STEP VICTIM [VICTIM...]
//   STEP: returned (the victims die the moment their submit returns) or a
//   step of the protocol (rampart/store/detail/kill_hook.hpp), where the
//   store's test hook kills them.
//
// Version 1 is submitted by all; the victims die during the submit of
// version 2. Each survivor waits (with a deadline) until the runtime has
// reported exactly the victims lost, checks the version it sees against what
// the step allows, loads every block and compares it with the submitted
// bytes, then submits version 3 of all blocks among the survivors and loads
// it back. It prints "rank R: agreed on version V" (compared across the
// survivors by same_lines.sh) and "rank R: PASS"; any check that fails
// prints "FAIL" and exits 1.
#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/detail/kill_hook.hpp>
#include <rampart/store/store.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "store_data.hpp"

namespace rs = rampart::store;

namespace {
int fail(int me, const std::string& why) {
    std::printf("rank %d: FAIL: %s\n", me, why.c_str());
    return 1;
}

bool equal(const std::vector<char>& got, const std::vector<std::byte>& want) {
    return got.size() == want.size() && std::memcmp(got.data(), want.data(), got.size()) == 0;
}
}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the log even if a rank is killed later
    if (argc < 4) {
        std::fprintf(stderr, "usage: store_submit_crash R STEP VICTIM...\n");
        return 2;
    }
    const std::string step = argv[2];
    std::vector<int> victims;
    for (int i = 3; i < argc; ++i) victims.push_back(std::atoi(argv[i]));
    std::sort(victims.begin(), victims.end());
    rampart::runtime rt(1);
    const int me = rampart::comm::rank(), p = rampart::comm::size();
    const bool victim = std::binary_search(victims.begin(), victims.end(), me);
    if (victim && step != "returned") rs::detail::kill_during_submit(step, 2);
    rs::options o;
    o.replicas = std::atoi(argv[1]);
    const std::size_t bb = 64;
    const std::uint64_t per = 2048, n = per * static_cast<std::uint64_t>(p), first = per * static_cast<std::uint64_t>(me);
    rs::store s(bb, o);
    if (s.submit(first, store_test::blocks(first, per, bb, 1), n) != 1) return fail(me, "version 1 not complete");

    std::uint64_t returned = 0;
    try {
        returned = s.submit(first, store_test::blocks(first, per, bb, 2), n);
    } catch (const rs::store_error& e) {
        std::printf("rank %d: %s\n", me, e.what());
    }
    if (victim) {
        if (step != "returned") return fail(me, "the victim outlived step " + step);
        std::printf("rank %d: dies after its submit returned version %llu\n", me,
                    static_cast<unsigned long long>(returned));
        std::raise(SIGKILL);
    }

    // The fault really happened: the runtime reports exactly the victims lost.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (rampart::recovery::lost_ranks().size() < victims.size()) {
        if (std::chrono::steady_clock::now() > deadline) return fail(me, "the victims were not reported lost");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (rampart::recovery::lost_ranks() != victims) return fail(me, "other ranks than the victims were lost");

    const std::uint64_t v = s.version();
    if (returned != 0 && v != returned) return fail(me, "its own submit returned a version that is not kept");
    if (step == "returned" && v != 2) return fail(me, "a victim's submit returned version 2, yet it is abandoned");
    if ((step == "begin" || step == "puts") && v != 1)
        return fail(me, "a victim died before its copies were held, yet version 2 is kept");
    if (v != 1 && v != 2) return fail(me, "version " + std::to_string(v));
    if (!equal(s.load({{0, n}}), store_test::blocks(0, n, bb, v)))
        return fail(me, "wrong bytes for version " + std::to_string(v));
    std::printf("rank %d: agreed on version %llu, all %llu blocks equal\n", me, static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(n));

    // The store goes on: the survivors submit every block among themselves.
    std::vector<int> alive;
    for (int q = 0; q < p; ++q)
        if (!std::binary_search(victims.begin(), victims.end(), q)) alive.push_back(q);
    const auto k = static_cast<std::uint64_t>(alive.size());
    const auto i = static_cast<std::uint64_t>(std::find(alive.begin(), alive.end(), me) - alive.begin());
    const std::uint64_t from = n * i / k, to = n * (i + 1) / k;
    if (s.submit(from, store_test::blocks(from, to - from, bb, 3), n) != v + 1)
        return fail(me, "the submit after the failure did not make version " + std::to_string(v + 1));
    if (!equal(s.load({{0, n}}), store_test::blocks(0, n, bb, 3))) return fail(me, "wrong bytes after the new submit");
    std::printf("rank %d: PASS (step %s, %zu victims, r = %d)\n", me, step.c_str(), victims.size(), o.replicas);
    return 0;
}
