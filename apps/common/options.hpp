#pragma once
// Options the distributed programs share: worker threads and the faults
// injected into their resilient tasks.

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>

namespace rampart::apps {

/// Counts and sizes: at least 1 (CLI11's PositiveNumber names no bound).
inline const CLI::Range positive(std::uint64_t{1}, std::uint64_t{1} << 40);

/// --threads, --error-rate, --seed and --replays.
inline void add_task_options(CLI::App& app, int& threads, double& error_rate, std::uint64_t& seed,
                             std::size_t& replays) {
    app.add_option("--threads", threads, "worker threads (0: RAMPART_THREADS or every core)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--error-rate", error_rate, "probability of a fault per task attempt")->check(CLI::Range(0.0, 1.0));
    app.add_option("--seed", seed, "seed of the faults");
    app.add_option("--replays", replays, "attempts of replay, rounds of replicate")->check(positive);
}

}  // namespace rampart::apps
