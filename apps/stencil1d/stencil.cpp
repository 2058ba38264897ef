#include "stencil.hpp"

#include <rampart/rampart.hpp>

#include <xxhash.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>

namespace rampart::stencil {

bool operator==(const partition& a, const partition& b) noexcept {
    return a.checksum == b.checksum && a.values.size() == b.values.size() &&
           std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0;
}

std::uint64_t word_sum(std::span<const double> values) noexcept {
    std::uint64_t s = 0;
    for (double v : values) {
        std::uint64_t w;
        std::memcpy(&w, &v, sizeof w);
        s += w;
    }
    return s;
}

bool checksum_matches(const partition& p) noexcept { return word_sum(p.values) == p.checksum; }

namespace {

// One Lax-Wendroff step over [lo, hi): out[j - shift] from in[j-1..j+1].
// Compiled for AVX2 and for the baseline; both give the same bits (no FMA
// contraction in ISO C++ mode).
__attribute__((target_clones("avx2", "default"))) void lax_wendroff_step(const double* __restrict in,
                                                                           double* __restrict out, std::size_t lo,
                                                                           std::size_t hi, std::size_t shift,
                                                                           double cl, double cc, double cr) {
    for (std::size_t j = lo; j < hi; ++j) out[j - shift] = cl * in[j - 1] + cc * in[j] + cr * in[j + 1];
}

}  // namespace

partition advance(const partition& left, const partition& mid, const partition& right, std::size_t steps,
                  double courant) {
    const std::size_t p = mid.values.size(), s = steps;
    if (s == 0 || left.values.size() < s || right.values.size() < s || p < 1)
        throw rampart::invalid_argument("stencil: neighbours smaller than the ghost region");
    // Ghost region of `steps` values on each side; each step shrinks the valid
    // range by one on both sides until exactly the subdomain remains.
    thread_local std::vector<double> a, b;
    const std::size_t n = p + 2 * s;
    a.resize(n);
    b.resize(n);
    std::memcpy(a.data(), left.values.data() + left.values.size() - s, s * sizeof(double));
    std::memcpy(a.data() + s, mid.values.data(), p * sizeof(double));
    std::memcpy(a.data() + s + p, right.values.data(), s * sizeof(double));

    const double c = courant;
    const double cl = 0.5 * c * (1.0 + c), cc = 1.0 - c * c, cr = 0.5 * c * (c - 1.0);
    partition out;
    out.values.resize(p);
    double* in = a.data();
    double* tmp = b.data();
    for (std::size_t step = 1; step < s; ++step) {
        lax_wendroff_step(in, tmp, step, n - step, 0, cl, cc, cr);
        std::swap(in, tmp);
    }
    lax_wendroff_step(in, out.values.data(), s, s + p, s, cl, cc, cr);
    out.checksum = word_sum(out.values);
    return out;
}

variant parse_variant(const std::string& name) {
    if (name == "dataflow") return variant::dataflow;
    if (name == "replay") return variant::replay;
    if (name == "replay_checksum") return variant::replay_checksum;
    if (name == "replicate_vote") return variant::replicate_vote;
    throw rampart::invalid_argument("unknown variant '" + name +
                                    "' (known: dataflow, replay, replay_checksum, replicate_vote)");
}

std::string to_string(variant v) {
    switch (v) {
        case variant::dataflow: return "dataflow";
        case variant::replay: return "replay";
        case variant::replay_checksum: return "replay_checksum";
        case variant::replicate_vote: return "replicate_vote";
    }
    return "?";
}

std::string fault_kind(variant v) { return v == variant::replay ? "exception" : "bitflip"; }

namespace {

counters difference(const counters& after, const counters& before) {
    return {after.tasks - before.tasks,
            after.replays - before.replays,
            after.replicas_launched - before.replicas_launched,
            after.votes_lost - before.votes_lost,
            after.validations_failed - before.validations_failed,
            after.corrections_applied - before.corrections_applied,
            after.task_exceptions - before.task_exceptions,
            after.exhausted - before.exhausted};
}

partition initial(std::size_t sub, const config& c) {
    partition p;
    p.values.resize(c.points);
    const double total = static_cast<double>(c.subdomains * c.points);
    for (std::size_t k = 0; k < c.points; ++k) {
        double x = static_cast<double>(sub * c.points + k) / total;
        p.values[k] = std::sin(2 * std::numbers::pi * x) + std::exp(-std::pow((x - 0.3) / 0.05, 2));
    }
    p.checksum = word_sum(p.values);
    return p;
}

}  // namespace

result run(const config& c) {
    if (c.subdomains < 1) throw rampart::invalid_argument("stencil: need at least one subdomain");
    if (c.steps < 1 || c.points < c.steps)
        throw rampart::invalid_argument("stencil: points per subdomain must be at least the time steps per task");
    if (!(c.courant > 0 && c.courant <= 1)) throw rampart::invalid_argument("stencil: Courant number must be in (0, 1]");
    if (c.replays < 1) throw rampart::invalid_argument("stencil: replays must be at least 1");

    const std::size_t n = c.subdomains;
    std::vector<shared_future<partition>> cur(n);
    for (std::size_t i = 0; i < n; ++i) cur[i] = make_ready_future(initial(i, c)).share();

    fault_injector inject(c.error_rate, c.seed);
    const bool faults = c.error_rate > 0;
    const std::size_t steps = c.steps;
    const double courant = c.courant;
    const counters before = read_counters();
    const auto t0 = std::chrono::steady_clock::now();

    for (std::size_t it = 0; it < c.iterations; ++it) {
        std::vector<shared_future<partition>> next(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t key = it * n + i;
            auto& l = cur[(i + n - 1) % n];
            auto& m = cur[i];
            auto& r = cur[(i + 1) % n];
            // Every variant computes the same partition; they differ in how a
            // fault is made and caught.
            auto compute_and_corrupt = [&inject, faults, key, steps, courant](const auto& l, const auto& m,
                                                                                const auto& r) {
                partition p = advance(l.get(), m.get(), r.get(), steps, courant);
                if (faults) inject.maybe_flip_bit(p.values, key);  // after the checksum: silent corruption
                return p;
            };
            switch (c.kind) {
                case variant::dataflow:
                    next[i] = dataflow(compute_and_corrupt, l, m, r).share();
                    break;
                case variant::replay:
                    next[i] = dataflow_replay(
                                  c.replays,
                                  [&inject, faults, key, steps, courant](const auto& l, const auto& m, const auto& r) {
                                      if (faults) inject.maybe_throw(key);
                                      return advance(l.get(), m.get(), r.get(), steps, courant);
                                  },
                                  l, m, r)
                                  .share();
                    break;
                case variant::replay_checksum:
                    next[i] = dataflow_replay_validate(c.replays, checksum_matches, compute_and_corrupt, l, m, r).share();
                    break;
                case variant::replicate_vote:
                    next[i] = dataflow_replicate_replay(3, c.replays, majority_vote{}, compute_and_corrupt, l, m, r)
                                  .share();
                    break;
            }
        }
        cur = std::move(next);
    }
    for (auto& f : cur) f.wait();
    const auto t1 = std::chrono::steady_clock::now();

    XXH3_state_t* h = XXH3_createState();
    XXH3_64bits_reset(h);
    for (auto& f : cur) XXH3_64bits_update(h, f.get().values.data(), f.get().values.size() * sizeof(double));
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(h)));
    XXH3_freeState(h);

    result res;
    res.checksum = hex;
    res.seconds = std::chrono::duration<double>(t1 - t0).count();
    res.faults_injected = inject.injected();
    res.stats = difference(read_counters(), before);
    return res;
}

}  // namespace rampart::stencil
