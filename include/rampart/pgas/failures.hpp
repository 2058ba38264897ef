#pragma once
// What the arrays know of failures: the ranks dead (from the engine's
// recoveries, which rest on ULFM's failure notification; hung ranks are
// killed by rampart-run, or found by MPI's heartbeat detector with
// --detect-hangs), and when this process learnt of each death.
//
//     for (int r : rampart::pgas::dead_ranks()) std::printf("rank %d is dead\n", r);

#include <chrono>
#include <optional>
#include <vector>

namespace rampart::pgas {

/// The ranks this process knows to be dead, sorted. Starts the arrays'
/// service if needed (collective the first time, as the first array).
std::vector<int> dead_ranks();

/// When this process learnt that `rank` died; empty while it lives.
std::optional<std::chrono::steady_clock::time_point> death_noticed(int rank);

}  // namespace rampart::pgas
