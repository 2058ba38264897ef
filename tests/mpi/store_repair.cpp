// Restoring the replication level, then more failures (real SIGKILLs, no
// spare ranks). Four ranks hold two copies of every block: copies of the
// blocks first held by rank 1 live on ranks 1 and 3. Rank 1 dies; the store
// copies those blocks to rank 2 (the next living rank after 1), by itself
// after the recovery ("auto") or in restore_replication ("explicit"); then
// rank 3 dies too. Without the repair those blocks would be lost; with it
// the two survivors load every block back, byte for byte.
// Usage: store_repair auto|explicit
#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/store.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "store_data.hpp"

namespace rs = rampart::store;

int main(int argc, char** argv) {
    rampart::runtime rt(1);
    const int me = rampart::comm::rank(), p = rampart::comm::size();
    if (argc != 2 || p != 4) return 2;
    const bool explicit_call = std::string(argv[1]) == "explicit";
    rs::options o;
    o.replicas = 2;
    const std::size_t bb = 64;
    const std::uint64_t per = 1000, n = per * 4;
    rs::store s(bb, o);
    s.submit(per * static_cast<std::uint64_t>(me), store_test::blocks(per * static_cast<std::uint64_t>(me), per, bb), n);
    s.load(std::span<const rs::id_range>{});  // everyone holds every copy
    if (me == 1) std::raise(SIGKILL);

    // The store has seen the recovery once the runtime lists the dead rank.
    while (rampart::recovery::lost_ranks().empty()) std::this_thread::yield();
    std::uint64_t repaired = 0;
    if (explicit_call) repaired = s.restore_replication();
    // Collective: over on a rank only after every rank's store messages sent
    // before it (the repairs among them) have arrived.
    s.load(std::span<const rs::id_range>{});
    if (!explicit_call) repaired = s.counters().blocks_repaired;
    if (me == 3) {
        std::printf("rank 3: %llu blocks sent to restore copies\n", static_cast<unsigned long long>(repaired));
        std::fflush(stdout);
        std::raise(SIGKILL);
    }
    while (rampart::recovery::lost_ranks().size() < 2) std::this_thread::yield();
    auto got = s.load({{0, n}});
    const auto want = store_test::blocks(0, n, bb);
    if (got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size()) != 0) {
        std::printf("rank %d: wrong bytes\n", me);
        return 1;
    }
    std::printf("rank %d: repaired, then survived another failure: %llu blocks equal\n", me,
                static_cast<unsigned long long>(n));
    return 0;
}
