#pragma once
// Where the processes of a replicated job are, and which of them live.

#include <string>
#include <vector>

namespace rampart::replica::detail {

/// More would add nothing: three already outvote a corrupted replica.
constexpr int max_replicas = 8;

/// Replica k of logical rank i is process k*n + i of MPI_COMM_WORLD: with
/// by-slot mapping the replicas of one rank land far apart (on different
/// nodes when each node holds at most n processes). Spares come after them.
class layout {
public:
    layout() = default;
    /// Throws std::runtime_error when `processes` cannot hold `replicas`
    /// copies of whole ranks plus the spares.
    layout(int processes, int replicas, int spares);

    int ranks() const { return ranks_; }
    int replicas() const { return replicas_; }
    int processes() const { return static_cast<int>(dead_.size()); }
    int spares() const { return processes() - ranks_ * replicas_; }
    /// Started as a spare (it may have re-created a replica since).
    bool spare(int process) const { return process >= ranks_ * replicas_; }

    int process(int rank, int replica) const {
        return process_of_[static_cast<std::size_t>(rank * replicas_ + replica)];
    }
    /// -1 for a spare.
    int rank_of(int process) const { return rank_of_[static_cast<std::size_t>(process)]; }
    int replica_of(int process) const { return replica_of_[static_cast<std::size_t>(process)]; }

    bool dead(int process) const { return dead_[static_cast<std::size_t>(process)] != 0; }
    bool alive(int rank, int replica) const { return !dead(process(rank, replica)); }
    void mark_dead(int process) { dead_[static_cast<std::size_t>(process)] = 1; }
    /// A spare re-created replica `replica` of `rank`: it is that replica now.
    void assign(int rank, int replica, int process);
    int live_replicas(int rank) const;

    /// The replica of `rank` that sends on behalf of its replica `replica`:
    /// the replica itself while it lives, else the next live one after it
    /// (cyclically). Every process that knows the same deaths elects the
    /// same one, without a message. -1 when every replica of `rank` is dead.
    int responsible(int rank, int replica) const;
    /// This process's place among the live replicas of its rank.
    int live_position(int rank, int replica) const;

private:
    int ranks_ = 1, replicas_ = 1;
    std::vector<int> process_of_, rank_of_, replica_of_;
    std::vector<char> dead_;
};

}  // namespace rampart::replica::detail
