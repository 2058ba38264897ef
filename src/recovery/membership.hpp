#pragma once
// Who is who after crashes: the logical ranks a program sees, the MPI
// processes (ranks of MPI_COMM_WORLD) that run them, and the spare processes
// that wait to replace a crashed one. Every process applies the same agreed
// list of dead processes in the same way, so all reach the same assignment
// without exchanging it.

#include <string>
#include <utility>
#include <vector>

namespace rampart::recovery::detail {

class membership {
public:
    /// `world_size` processes, of which the last `spares` wait as spares.
    /// Throws std::invalid_argument unless 0 <= spares < world_size.
    membership(int world_size, int spares);

    int logical_size() const noexcept { return static_cast<int>(process_of_.size()); }
    /// The process that runs `logical`, or -1 when it died without a replacement.
    int process_of(int logical) const { return process_of_.at(static_cast<std::size_t>(logical)); }
    /// The logical rank that `process` runs, or -1 (a spare, or dead).
    int logical_of(int process) const;
    /// How often `logical` has been replaced: 0 for the process that started as it.
    int incarnation(int logical) const { return incarnation_.at(static_cast<std::size_t>(logical)); }
    const std::vector<int>& idle_spares() const noexcept { return spares_; }
    /// Logical ranks that died with no spare left to replace them.
    std::vector<int> lost() const;
    /// Processes that are alive as far as this membership knows.
    std::vector<int> alive_processes() const;

    /// What one recovery changed.
    struct change {
        std::vector<int> dead_logical;                  ///< logical ranks whose process died
        std::vector<int> dead_spares;                   ///< idle spares that died
        std::vector<std::pair<int, int>> replacements;  ///< (logical rank, process of the spare that took it)
        std::vector<int> lost;                          ///< dead logical ranks no spare was left for
    };

    /// Removes the dead processes. Each dead logical rank, lowest first, goes
    /// to the lowest idle spare. Processes unknown or already dead are ignored.
    change remove(const std::vector<int>& dead_processes);

private:
    std::vector<int> process_of_;   // per logical rank
    std::vector<int> incarnation_;  // per logical rank
    std::vector<int> spares_;       // idle, ascending
};

/// "1, 3" for {1, 3}.
std::string join_ranks(const std::vector<int>& ranks);

}  // namespace rampart::recovery::detail
