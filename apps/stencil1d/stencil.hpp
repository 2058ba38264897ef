#pragma once
// The 1D stencil of the HPX and HClib resilience papers: linear advection
// solved with Lax-Wendroff on a periodic domain cut into subdomains; each task
// advances one subdomain several time steps using ghost regions of its two
// neighbours.

#include <rampart/task/counters.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rampart::stencil {

/// One subdomain and a checksum of its bytes taken when it was computed.
struct partition {
    std::vector<double> values;
    std::uint64_t checksum = 0;

    /// Bitwise equality, as a vote needs.
    friend bool operator==(const partition& a, const partition& b) noexcept;
};

/// Sum of the 64-bit words of the values, modulo 2^64: any single flipped bit
/// changes it.
std::uint64_t word_sum(std::span<const double> values) noexcept;

/// Whether the values still match the checksum taken when they were made.
bool checksum_matches(const partition& p) noexcept;

/// Advances `mid` by `steps` time steps with Courant number `courant`, using
/// the last `steps` values of `left` and the first `steps` of `right`.
partition advance(const partition& left, const partition& mid, const partition& right, std::size_t steps,
                  double courant);

enum class variant { dataflow, replay, replay_checksum, replicate_vote };

struct config {
    variant kind = variant::dataflow;
    std::size_t subdomains = 128;
    std::size_t points = 2000;      // per subdomain
    std::size_t iterations = 1000;  // tasks per subdomain
    std::size_t steps = 16;         // time steps per task
    double error_rate = 0.0;        // probability that a task attempt suffers a fault
    std::uint64_t seed = 1;
    std::size_t replays = 5;  // attempts of replay, rounds of replicate
    double courant = 0.5;
    bool distributed = false;          // across the ranks of mpiexec (rampart::comm)
    std::size_t checkpoint_every = 0;  // iterations between checkpoints in the store (0: none; distributed only)
};

struct result {
    std::string checksum;  // hex XXH3-64 of the final field's bytes
    double seconds = 0;    // time of the time loop only
    std::uint64_t faults_injected = 0;
    counters stats;
    double cpu_seconds = 0;               // CPU time of the process(es) during the time loop
    double comm_cpu_seconds = 0;          // of which the communication engine's (distributed runs)
    std::uint64_t checkpoints_saved = 0;  // complete everywhere, seen by rank 0
    std::uint64_t resumed_at = 0;         // iterations a replacement skipped thanks to a checkpoint (summed)
};

variant parse_variant(const std::string& name);
std::string to_string(variant v);
/// "exception" or "bitflip": the faults each variant is given.
std::string fault_kind(variant v);

/// Runs the stencil; needs a live rampart::runtime. Distributed, each rank
/// owns a contiguous block of subdomains and exchanges the edges of its block
/// with its neighbours; rank 0's result holds the checksum of the whole field
/// and the counters summed over all ranks (other ranks: their own counters,
/// no checksum). Throws rampart::invalid_argument for a configuration that
/// cannot run.
result run(const config& c);

}  // namespace rampart::stencil
