// A fault-tolerant distributed array: ranks take tasks from a shared
// counter, square numbers and put them into a 1-D array that every block of
// has a second copy (a shadow) on another rank. A rank that dies is not
// replaced: the survivors read its blocks from their shadows, and the tasks
// it took and had not finished are handed to them by the task pool.
//
//   tools/rampart-run -n 4 -- build/apps/examples/rampart-example-array
//   tools/rampart-run -n 4 --kill 1@iter0 -- build/apps/examples/rampart-example-array
//
// Both print the same line (the lowest living rank): result 41541750 (the sum of i*i for i < 500)
#include <rampart/rampart.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>

namespace pgas = rampart::pgas;

int main() {
    rampart::runtime rt;
    constexpr std::int64_t n = 500, per_task = 10;
    pgas::array<std::int64_t> squares("squares", n);  // collective: cut over the ranks, shadows included
    pgas::task_pool pool("chunks", n / per_task);      // a shared counter and done marks, in arrays too
    std::uint64_t taken = 0;
    while (auto task = pool.next()) {
        rampart::recovery::report_iteration(taken++);  // where rampart-run --kill R@iterN strikes
        std::vector<std::int64_t> values(per_task);
        for (std::int64_t k = 0; k < per_task; ++k) values[k] = (*task * per_task + k) * (*task * per_task + k);
        squares.put(pgas::patch::range(*task * per_task, (*task + 1) * per_task), values);
        pool.done(*task);
    }
    squares.sync();  // every rank's puts are seen everywhere
    if (pool.taken_over() > 0) std::printf("rank %d took over %lld tasks of dead ranks\n", rampart::comm::rank(),
                                           static_cast<long long>(pool.taken_over()));
    const auto all = squares.get(pgas::patch::range(0, n)).get();  // the dead ranks' blocks from their shadows
    const auto dead = pgas::dead_ranks();
    int lowest = 0;
    while (std::binary_search(dead.begin(), dead.end(), lowest)) ++lowest;
    if (rampart::comm::rank() == lowest)
        std::printf("result %lld\n", static_cast<long long>(std::accumulate(all.begin(), all.end(), std::int64_t{0})));
}
