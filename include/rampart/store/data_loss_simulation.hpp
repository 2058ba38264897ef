#pragma once
// How many PEs can fail before some block has no copy left: a simulation on
// the real placement (the restore paper, VI-B1) and the IV-D model of the
// same number, so that the two can be compared.
//
//     rampart::store::placement where(1 << 20, 1024, 4, 64, 7);
//     auto samples = rampart::store::simulate_failures_until_loss(where, 1000, 1);
//     auto sim = rampart::store::summarize_failures(samples);
//     auto model = rampart::store::model_failures_until_loss(1024, 4);
//     // sim.mean and model.mean agree within a few percent

#include <rampart/store/placement.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace rampart::store {

/// The distinct sets of PEs that hold all copies of some block of a
/// placement, and a failure process on them.
class loss_simulator {
public:
    explicit loss_simulator(const placement& where);

    int pes() const noexcept { return p_; }
    /// Distinct holder sets: p/r when r | p and every group holds data.
    std::size_t holder_sets() const noexcept { return set_size_.size(); }
    /// The PEs of holder set i, ascending.
    std::vector<int> holder_set(std::size_t i) const;

    /// Fails distinct PEs chosen uniformly at random, one at a time, until
    /// every holder of some block has failed; returns how many failed then
    /// (r..p). Uses only `rng`, so a seed gives the same sequence anywhere.
    int failures_until_loss(std::mt19937_64& rng);

private:
    int p_;
    std::vector<std::uint32_t> first_set_;  // sets of PE q: set_ids_[first_set_[q] .. first_set_[q + 1])
    std::vector<std::uint32_t> set_ids_;
    std::vector<int> set_size_;
    std::vector<int> dead_;   // failed members per set during a trial
    std::vector<int> order_;  // a permutation of the PEs; a trial's failures are a prefix
};

/// `trials` independent runs of loss_simulator::failures_until_loss with a
/// std::mt19937_64 seeded with `seed`. Throws std::invalid_argument unless
/// trials >= 1.
std::vector<int> simulate_failures_until_loss(loss_simulator& simulator, int trials, std::uint64_t seed);
std::vector<int> simulate_failures_until_loss(const placement& where, int trials, std::uint64_t seed);

/// Mean and quantiles of the number of failures until the first loss. A
/// quantile q is the smallest count c with P(count <= c) >= q (of the
/// samples, or of the model's distribution).
struct loss_statistics {
    double mean = 0;
    double standard_error = 0;  ///< of the mean; 0 for the model
    int p10 = 0, median = 0, p90 = 0;
};

/// Of samples from simulate_failures_until_loss; throws
/// std::invalid_argument if there are none.
loss_statistics summarize_failures(std::vector<int> samples);

/// The model: with L(f) = probability_of_data_loss(p, r, f), the chance
/// that loss happened at or before the f-th failure, the count F until loss
/// has P(F > f) = 1 - L(f), so E[F] = sum_{f=0}^{p-1} (1 - L(f)). Throws
/// std::invalid_argument unless r divides p.
loss_statistics model_failures_until_loss(int p, int r);

}  // namespace rampart::store
