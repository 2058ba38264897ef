// Shrinking recovery with the replicated store: a rank that dies is not
// replaced; the survivors load its data from the store and do its work.
// Each rank submits its 8 blocks (data that could not be read again) to the
// store, which keeps 2 copies of each block on different ranks, works
// through them, one iteration per block, and the ranks exchange their sums.
// A rank lost before it sent its sum fails that exchange with a comm_error
// on every survivor; they acknowledge the loss, share out its blocks, load
// them from the store and exchange again. (apps/kmeans also survives losses
// during the exchange and during the recovery.) Run it without spares: a
// spare would start the program again, and its submit would wait for
// survivors long past theirs.
//
//   tools/rampart-run -n 4 -- build/apps/examples/rampart-example-shrinking
//   tools/rampart-run -n 4 --kill 1@iter5 -- build/apps/examples/rampart-example-shrinking
//
// Both print the same line (the lowest living rank): result 3075486 Collatz steps
#include <rampart/rampart.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <span>
#include <vector>

namespace comm = rampart::comm;
using number = std::uint64_t;
constexpr number blocks_per_rank = 8, block_size = 1000;

// The work on one block: the Collatz steps of its numbers. Integer sums give
// the same total in any order, whichever rank works on which block.
number work(const number* block) {
    number steps = 0;
    for (number i = 0; i < block_size; ++i)
        for (number x = block[i]; x != 1; x = x % 2 ? 3 * x + 1 : x / 2) ++steps;
    return steps;
}

// Sends this rank's sum to every other living rank and adds up theirs.
number exchange(number sum, int tag, const std::vector<int>& living) {
    std::vector<rampart::future<number>> theirs;
    for (int r : living)
        if (r != comm::rank()) {
            theirs.push_back(comm::irecv<number>(r, tag));
            comm::isend(r, tag, sum);
        }
    for (auto& f : theirs) sum += f.get();  // from a lost rank: a comm_error
    return sum;
}

int main() {
    rampart::runtime rt;
    const int me = comm::rank(), n = comm::size();
    std::vector<number> mine(blocks_per_rank * block_size);  // blocks me * 8 ... me * 8 + 7
    std::iota(mine.begin(), mine.end(), me * mine.size() + 1);
    rampart::store::store store(block_size * sizeof(number), {.replicas = 2});
    store.submit(me * blocks_per_rank, std::as_bytes(std::span(mine)), n * blocks_per_rank);  // collective

    number sum = 0;
    for (number b = 0; b < blocks_per_rank; ++b) {
        rampart::recovery::report_iteration(b);  // --kill R@iterN strikes here
        sum += work(&mine[b * block_size]);
    }
    std::vector<int> living(n);
    std::iota(living.begin(), living.end(), 0);
    number total = 0;
    try {
        total = exchange(sum, /*tag=*/0, living);
    } catch (const comm::comm_error&) {
        // The runtime names the lost ranks a moment after it fails the receives.
        rampart::recovery::wait_for_losses(std::chrono::seconds(10));
        const std::vector<int> lost = rampart::recovery::acknowledge_losses();
        std::erase_if(living, [&](int r) { return std::ranges::find(lost, r) != lost.end(); });
        std::vector<rampart::store::id_range> share;  // the lost ranks' blocks, dealt out to the living in turn
        std::size_t k = 0;
        for (number dead : lost)
            for (number b = dead * blocks_per_rank; b < (dead + 1) * blocks_per_rank; ++b)
                if (living[k++ % living.size()] == me) share.push_back({b, 1});
        const std::vector<number> blocks = store.load_as<number>(share);  // collective among the living
        for (std::size_t j = 0; j < share.size(); ++j) sum += work(&blocks[j * block_size]);
        std::fprintf(stderr, "rank %d took over %zu blocks of lost ranks from the store\n", me, share.size());
        total = exchange(sum, /*tag=*/1, living);  // a new tag: messages of the failed exchange never match
    }
    if (me == living.front()) std::printf("result %llu Collatz steps\n", static_cast<unsigned long long>(total));
}
