#include "layout.hpp"

#include <stdexcept>

namespace rampart::replica::detail {

layout::layout(int processes, int replicas, int spares) : replicas_(replicas) {
    if (replicas < 1 || replicas > max_replicas)
        throw std::runtime_error("RAMPART_REPLICAS=" + std::to_string(replicas) + ": from 1 to " +
                                 std::to_string(max_replicas));
    if (spares < 0 || spares >= processes)
        throw std::runtime_error("RAMPART_REPLICA_SPARES=" + std::to_string(spares) + " with " +
                                 std::to_string(processes) + " processes");
    if ((processes - spares) % replicas != 0)
        throw std::runtime_error(std::to_string(processes - spares) + " processes (without spares) are not " +
                                 std::to_string(replicas) + " replicas of whole ranks");
    ranks_ = (processes - spares) / replicas;
    process_of_.resize(static_cast<std::size_t>(ranks_ * replicas_));
    rank_of_.assign(static_cast<std::size_t>(processes), -1);
    replica_of_.assign(static_cast<std::size_t>(processes), -1);
    dead_.assign(static_cast<std::size_t>(processes), 0);
    for (int k = 0; k < replicas_; ++k)
        for (int i = 0; i < ranks_; ++i) {
            const int p = k * ranks_ + i;
            process_of_[static_cast<std::size_t>(i * replicas_ + k)] = p;
            rank_of_[static_cast<std::size_t>(p)] = i;
            replica_of_[static_cast<std::size_t>(p)] = k;
        }
}

void layout::assign(int rank, int replica, int process) {
    process_of_[static_cast<std::size_t>(rank * replicas_ + replica)] = process;
    rank_of_[static_cast<std::size_t>(process)] = rank;
    replica_of_[static_cast<std::size_t>(process)] = replica;
}

int layout::live_replicas(int rank) const {
    int n = 0;
    for (int k = 0; k < replicas_; ++k) n += alive(rank, k) ? 1 : 0;
    return n;
}

int layout::responsible(int rank, int replica) const {
    for (int step = 0; step < replicas_; ++step) {
        const int k = (replica + step) % replicas_;
        if (alive(rank, k)) return k;
    }
    return -1;
}

int layout::live_position(int rank, int replica) const {
    int position = 0;
    for (int k = 0; k < replica; ++k) position += alive(rank, k) ? 1 : 0;
    return position;
}

}  // namespace rampart::replica::detail
