// Substituting recovery with the store (real SIGKILL, one spare): four ranks
// submit version 1 (two copies of each block); rank 1 dies; a spare takes
// its place, creates its store, which joins the survivors' (it learns which
// operations they have done and which version is complete), and all four
// submit version 2 (again, if the survivors' first try overlapped the
// failure and was abandoned) and load every block of it back, byte for byte.
// With "late" the survivors wait for the recovery before they submit, so
// that the replacement takes part in their first try.
// Run: RAMPART_SPARES=1 RAMPART_KILL=1@iter1 mpiexec -n 5 ... [early|late]
#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/store.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "store_data.hpp"

namespace rs = rampart::store;

int main(int argc, char** argv) {
    const bool late = argc > 1 && std::string(argv[1]) == "late";
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    rampart::runtime rt(1);
    const int me = rampart::comm::rank(), p = rampart::comm::size();
    const int incarnation = rampart::recovery::incarnation();
    const std::size_t bb = 48;
    const std::uint64_t per = 700, n = per * static_cast<std::uint64_t>(p), first = per * static_cast<std::uint64_t>(me);
    rs::options o;
    o.replicas = 2;
    rs::store s(bb, o);
    if (incarnation == 0) {
        s.submit(first, store_test::blocks(first, per, bb, 1), n);
        s.load(std::span<const rs::id_range>{});
        rampart::recovery::report_iteration(1);  // rank 1 dies here
        while (late && rampart::recovery::recoveries() == 0) std::this_thread::yield();
    }
    int tries = 0;
    for (;;) {
        ++tries;
        try {
            if (s.submit(first, store_test::blocks(first, per, bb, 2), n) == 2) break;
        } catch (const rs::store_error& e) {
            std::printf("rank %d: %s\n", me, e.what());
        }
        if (tries == 3) {
            std::printf("rank %d: FAIL: version 2 not complete after 3 tries\n", me);
            return 1;
        }
    }
    const auto got = s.load({{0, n}});
    const auto want = store_test::blocks(0, n, bb, 2);
    if (got != std::vector<char>(reinterpret_cast<const char*>(want.data()),
                                 reinterpret_cast<const char*>(want.data()) + want.size())) {
        std::printf("rank %d: FAIL: wrong bytes\n", me);
        return 1;
    }
    std::printf("rank %d (incarnation %d): version 2 complete after %d tries, %llu blocks equal\n", me, incarnation,
                tries, static_cast<unsigned long long>(n));
    return 0;
}
