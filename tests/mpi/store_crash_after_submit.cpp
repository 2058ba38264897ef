// A rank dies the moment its submit returns, while its "done" may still be
// on the way to the others: every survivor must still decide the same way
// on whether that version is complete, and load it (or the one before) back
// byte for byte. Prints "rank R: version V"; the test compares the lines.
#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/store.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "store_data.hpp"

namespace rs = rampart::store;

int main() {
    rampart::runtime rt(1);
    const int me = rampart::comm::rank(), p = rampart::comm::size();
    rs::options o;
    o.replicas = 2;
    const std::size_t bb = 32;
    const std::uint64_t per = 512, n = per * static_cast<std::uint64_t>(p), first = per * static_cast<std::uint64_t>(me);
    rs::store s(bb, o);
    s.submit(first, store_test::blocks(first, per, bb, 1), n);
    try {
        s.submit(first, store_test::blocks(first, per, bb, 2), n);
    } catch (const rs::store_error& e) {
        std::printf("rank %d: %s\n", me, e.what());  // abandoned: version 1 stays
    }
    if (me == 1) std::raise(SIGKILL);
    rampart::recovery::wait_for_losses(std::chrono::seconds(60));
    const std::uint64_t v = s.version();
    auto got = s.load({{0, n}});
    const auto want = store_test::blocks(0, n, bb, v);
    if (got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size()) != 0) {
        std::printf("rank %d: wrong bytes for version %llu\n", me, static_cast<unsigned long long>(v));
        return 1;
    }
    std::printf("rank %d: now at version %llu\n", me, static_cast<unsigned long long>(v));
    return 0;
}
