#include <rampart/store/data_loss_simulation.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace rampart::store {

namespace {
__extension__ typedef unsigned __int128 wide;

// Uniform in [0, n) by multiply-shift rather than
// std::uniform_int_distribution, whose algorithm differs between standard
// libraries: the same seed then fails the same PEs everywhere. The bias is
// below n / 2^64.
int below(std::mt19937_64& rng, int n) {
    return static_cast<int>((static_cast<wide>(rng()) * static_cast<unsigned>(n)) >> 64);
}
}  // namespace

loss_simulator::loss_simulator(const placement& where, int pes_per_node) : pes_(where.pes()) {
    if (pes_per_node < 1)
        throw std::invalid_argument("rampart::store::loss_simulator: " + std::to_string(pes_per_node) +
                                    " PEs per node");
    // A block's holders depend only on its first holder, so one unit per
    // first holder is enough: walk the units until every PE has been seen as
    // a first holder or the blocks end (fewer ranges than PEs).
    std::vector<char> seen(static_cast<std::size_t>(pes_), 0);
    int unseen = pes_;
    for (std::uint64_t id = 0; id < where.blocks() && unseen > 0;) {
        const placement_unit u = where.unit_of(id);
        if (u.first_id + u.count <= id) throw std::logic_error("rampart::store::loss_simulator: empty unit");
        if (!seen[static_cast<std::size_t>(u.first_holder)]) {
            seen[static_cast<std::size_t>(u.first_holder)] = 1;
            --unseen;
        }
        id = u.first_id + u.count;
    }
    std::vector<std::vector<int>> sets;
    for (int q = 0; q < pes_; ++q) {
        if (!seen[static_cast<std::size_t>(q)]) continue;
        std::vector<int> s;
        for (int k = 0; k < where.replicas(); ++k) s.push_back(where.holder_of_copy(q, k) / pes_per_node);
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        sets.push_back(std::move(s));
    }
    p_ = (pes_ + pes_per_node - 1) / pes_per_node;
    // With r | p the r first holders of one group give the same set.
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());

    first_set_.assign(static_cast<std::size_t>(p_) + 1, 0);
    for (const auto& s : sets)
        for (int pe : s) ++first_set_[static_cast<std::size_t>(pe) + 1];
    std::partial_sum(first_set_.begin(), first_set_.end(), first_set_.begin());
    set_ids_.resize(first_set_.back());
    std::vector<std::uint32_t> next(first_set_.begin(), first_set_.end() - 1);
    for (std::size_t i = 0; i < sets.size(); ++i) {
        set_size_.push_back(static_cast<int>(sets[i].size()));
        for (int pe : sets[i]) set_ids_[next[static_cast<std::size_t>(pe)]++] = static_cast<std::uint32_t>(i);
    }
    dead_.assign(sets.size(), 0);
    order_.resize(static_cast<std::size_t>(p_));
    std::iota(order_.begin(), order_.end(), 0);
}

std::vector<int> loss_simulator::holder_set(std::size_t i) const {
    if (i >= set_size_.size())
        throw std::invalid_argument("rampart::store::loss_simulator: no holder set " + std::to_string(i));
    std::vector<int> out;
    for (int pe = 0; pe < p_; ++pe)
        for (auto k = first_set_[static_cast<std::size_t>(pe)]; k < first_set_[static_cast<std::size_t>(pe) + 1]; ++k)
            if (set_ids_[k] == i) out.push_back(pe);
    return out;
}

int loss_simulator::failures_until_loss(std::mt19937_64& rng) {
    // A partial Fisher-Yates shuffle: order_[0, failed) are the failed PEs.
    // Starting from the previous trial's order is fine, any start gives a
    // uniform prefix. Only the sets of the PE that just failed can complete.
    int failed = 0;
    bool lost = false;
    while (!lost) {
        const int pick = failed + below(rng, p_ - failed);
        std::swap(order_[static_cast<std::size_t>(failed)], order_[static_cast<std::size_t>(pick)]);
        const auto pe = static_cast<std::size_t>(order_[static_cast<std::size_t>(failed++)]);
        for (auto k = first_set_[pe]; k < first_set_[pe + 1]; ++k)
            if (++dead_[set_ids_[k]] == set_size_[set_ids_[k]]) lost = true;
    }
    for (int i = 0; i < failed; ++i) {
        const auto pe = static_cast<std::size_t>(order_[static_cast<std::size_t>(i)]);
        for (auto k = first_set_[pe]; k < first_set_[pe + 1]; ++k) dead_[set_ids_[k]] = 0;
    }
    return failed;
}

std::vector<int> simulate_failures_until_loss(loss_simulator& simulator, int trials, std::uint64_t seed) {
    if (trials < 1) throw std::invalid_argument("rampart::store: " + std::to_string(trials) + " trials");
    std::mt19937_64 rng(seed);
    std::vector<int> out(static_cast<std::size_t>(trials));
    for (auto& f : out) f = simulator.failures_until_loss(rng);
    return out;
}

std::vector<int> simulate_failures_until_loss(const placement& where, int trials, std::uint64_t seed) {
    loss_simulator simulator(where);
    return simulate_failures_until_loss(simulator, trials, seed);
}

loss_statistics summarize_failures(std::vector<int> samples) {
    if (samples.empty()) throw std::invalid_argument("rampart::store::summarize_failures: no samples");
    std::sort(samples.begin(), samples.end());
    const double n = static_cast<double>(samples.size());
    double sum = 0, squares = 0;
    for (int f : samples) sum += f;
    const double mean = sum / n;
    for (int f : samples) squares += (f - mean) * (f - mean);
    // The smallest sample whose empirical distribution function reaches q.
    const auto quantile = [&](double q) {
        const auto rank = static_cast<std::size_t>(std::ceil(q * n - 1e-9));
        return samples[std::max<std::size_t>(rank, 1) - 1];
    };
    loss_statistics s;
    s.mean = mean;
    s.standard_error = samples.size() > 1 ? std::sqrt(squares / (n - 1) / n) : 0;
    s.p10 = quantile(0.1);
    s.median = quantile(0.5);
    s.p90 = quantile(0.9);
    return s;
}

loss_statistics model_failures_until_loss(int p, int r) {
    loss_statistics s;
    s.p10 = s.median = s.p90 = -1;
    long double mean = 0;
    for (int f = 0; f <= p; ++f) {
        const long double loss = probability_of_data_loss(p, r, f);
        if (s.p10 < 0 && loss >= 0.1L) s.p10 = f;
        if (s.median < 0 && loss >= 0.5L) s.median = f;
        if (s.p90 < 0 && loss >= 0.9L) s.p90 = f;
        // P(no loss) only falls with f, so past 1e-20 the rest adds < p * 1e-20.
        if (1 - loss < 1e-20L) break;
        mean += 1 - loss;
    }
    s.mean = static_cast<double>(mean);
    return s;
}

loss_statistics model_node_failures_until_loss(int p, int r, int pes_per_node) {
    if (r < 1 || p < r || p % r != 0 || pes_per_node < 1 || (p / r) % pes_per_node != 0)
        throw std::invalid_argument("rampart::store::model_node_failures_until_loss: the model needs r | p and m | p/r "
                                    "(p = " + std::to_string(p) + ", r = " + std::to_string(r) + ", m = " +
                                    std::to_string(pes_per_node) + ")");
    return model_failures_until_loss(p / pes_per_node, r);
}

}  // namespace rampart::store
