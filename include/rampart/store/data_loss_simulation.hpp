#pragma once
// How many PEs (or whole nodes) can fail before some block has no copy
// left: a simulation on the real placement (the restore paper, VI-B1) and
// the IV-D model of the same number, so that the two can be compared.
//
//     rampart::store::placement where(1 << 20, 1024, 4, 64, 7);
//     auto samples = rampart::store::simulate_failures_until_loss(where, 1000, 1);
//     auto sim = rampart::store::summarize_failures(samples);
//     auto model = rampart::store::model_failures_until_loss(1024, 4);
//     // sim.mean and model.mean agree within a few percent
//
//     rampart::store::loss_simulator nodes(where, 8);  // 128 nodes of 8 PEs fail whole
//     auto per_node = rampart::store::simulate_failures_until_loss(nodes, 1000, 1);
//     auto node_model = rampart::store::model_node_failures_until_loss(1024, 4, 8);

#include <rampart/store/placement.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace rampart::store {

/// The distinct sets of failure units (PEs, or nodes) that hold all copies
/// of some block of a placement, and a failure process on them.
class loss_simulator {
public:
    /// With pes_per_node = m > 1 a failure takes a whole node: PEs
    /// [k*m, (k+1)*m) are node k (rampart-run puts ranks in such blocks), the
    /// last node holding what is left. Throws std::invalid_argument unless
    /// m >= 1.
    explicit loss_simulator(const placement& where, int pes_per_node = 1);

    int pes() const noexcept { return pes_; }
    /// What fails: the PEs, or the nodes.
    int units() const noexcept { return p_; }
    /// Distinct holder sets: p/r when r | p and every group holds data (of
    /// nodes: p/(r*m) when m also divides p/r).
    std::size_t holder_sets() const noexcept { return set_size_.size(); }
    /// The units of holder set i, ascending.
    std::vector<int> holder_set(std::size_t i) const;

    /// Fails distinct units chosen uniformly at random, one at a time, until
    /// every holder of some block has failed; returns how many failed then.
    /// Uses only `rng`, so a seed gives the same sequence anywhere.
    int failures_until_loss(std::mt19937_64& rng);

private:
    int pes_;
    int p_ = 0;  // units
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

/// The model for whole nodes of m PEs failing: with m dividing p/r, the r
/// copies of a block lie on r different nodes, and the p/m nodes form
/// p/(r*m) groups of r that hold the same data, so it is the model above on
/// p/m nodes. Throws std::invalid_argument unless r divides p and m divides
/// p/r.
loss_statistics model_node_failures_until_loss(int p, int r, int pes_per_node);

}  // namespace rampart::store
