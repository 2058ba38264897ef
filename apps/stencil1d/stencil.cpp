#include "stencil.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/checkpoint.hpp>

#include "../common/hex.hpp"

#include <xxhash.h>

#include <sys/resource.h>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <optional>

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
                                                                         std::size_t hi, std::size_t shift, double cl,
                                                                         double cc, double cr) {
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
        case variant::dataflow:
            return "dataflow";
        case variant::replay:
            return "replay";
        case variant::replay_checksum:
            return "replay_checksum";
        case variant::replicate_vote:
            return "replicate_vote";
    }
    return "?";
}

std::string fault_kind(variant v) { return v == variant::replay ? "exception" : "bitflip"; }

namespace {

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

namespace {

// Tags of the messages between neighbouring ranks. Each (source, tag) channel
// carries one message per iteration, in order, so no iteration number is
// needed in the tag.
constexpr int tag_tail_to_right = 1;  // my last subdomain's last values, for my right neighbour
constexpr int tag_head_to_left = 2;   // my first subdomain's first values, for my left neighbour
constexpr int tag_gather = 3;         // final partitions, to rank 0
constexpr int tag_counts = 4;         // counters, to rank 0

partition slice(const partition& p, std::size_t from, std::size_t count) {
    partition s;
    s.values.assign(p.values.begin() + static_cast<std::ptrdiff_t>(from),
                    p.values.begin() + static_cast<std::ptrdiff_t>(from + count));
    s.checksum = word_sum(s.values);
    return s;
}

shared_future<partition> ghost_from(int rank, int tag) {
    return comm::irecv<std::vector<double>>(rank, tag)
        .then([](future<std::vector<double>> f) {
            partition p;
            p.values = f.get();
            p.checksum = word_sum(p.values);
            return p;
        })
        .share();
}

// What a rank saves at a checkpoint after iteration `it`: its partitions
// and the ghosts its neighbours sent for iteration it+1, received already, so
// that every message sent before the save was received before it.
struct saved_state {
    std::vector<std::vector<double>> parts;
    std::vector<double> left, right;
    template <class Archive>
    void serialize(Archive& a) {
        a(parts, left, right);
    }
};

partition from_values(std::vector<double> values) {
    partition p;
    p.values = std::move(values);
    p.checksum = word_sum(p.values);
    return p;
}

double process_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void check(const config& c) {
    if (c.subdomains < 1) throw rampart::invalid_argument("stencil: need at least one subdomain");
    if (c.steps < 1 || c.points < c.steps)
        throw rampart::invalid_argument("stencil: points per subdomain must be at least the time steps per task");
    if (!(c.courant > 0 && c.courant <= 1))
        throw rampart::invalid_argument("stencil: Courant number must be in (0, 1]");
    if (c.replays < 1) throw rampart::invalid_argument("stencil: replays must be at least 1");
}

// This process owns the global subdomains [lo, hi); with one process, all.
struct layout {
    std::size_t n = 0, lo = 0, hi = 0, local = 0;
    int ranks = 1, me = 0, left_rank = 0, right_rank = 0;
    bool remote = false;

    explicit layout(const config& c) : n(c.subdomains) {
        ranks = c.distributed ? comm::size() : 1;
        me = c.distributed ? comm::rank() : 0;
        if (static_cast<std::size_t>(ranks) > n) throw rampart::invalid_argument("stencil: more ranks than subdomains");
        lo = first_of(me);
        hi = first_of(me + 1);
        local = hi - lo;
        left_rank = (me + ranks - 1) % ranks;
        right_rank = (me + 1) % ranks;
        remote = ranks > 1;
    }
    std::size_t first_of(int rank) const {
        return n * static_cast<std::size_t>(rank) / static_cast<std::size_t>(ranks);
    }
};

// The partitions of this rank and the ghosts of its neighbours' edges.
struct field {
    std::vector<shared_future<partition>> cur;
    shared_future<partition> left_ghost, right_ghost;
};

// Ghosts for the first iteration need no message: every process can compute
// the initial field.
field initial_field(const config& c, const layout& g) {
    field f;
    f.cur.resize(g.local);
    for (std::size_t k = 0; k < g.local; ++k) f.cur[k] = make_ready_future(initial(g.lo + k, c)).share();
    if (g.remote) {
        f.left_ghost = make_ready_future(initial((g.lo + g.n - 1) % g.n, c)).share();
        f.right_ghost = make_ready_future(initial(g.hi % g.n, c)).share();
    }
    return f;
}

// A replacement resumes from the newest checkpoint: the iteration to start at.
std::size_t resume(rampart::store::checkpoints& cp, const layout& g, field& f) {
    auto back = cp.restore<saved_state>();
    if (!back) return 0;
    for (std::size_t k = 0; k < g.local; ++k)
        f.cur[k] = make_ready_future(from_values(std::move(back->state.parts[k]))).share();
    f.left_ghost = make_ready_future(from_values(std::move(back->state.left))).share();
    f.right_ghost = make_ready_future(from_values(std::move(back->state.right))).share();
    std::fprintf(stderr, "rampart-stencil1d: rank %d resumes after iteration %llu from a checkpoint\n", g.me,
                 static_cast<unsigned long long>(back->iteration));
    return static_cast<std::size_t>(back->iteration) + 1;
}

// The task that advances local subdomain k in iteration `it`.
shared_future<partition> advance_task(const config& c, const layout& g, const field& f, std::size_t it, std::size_t k,
                                      fault_injector& inject) {
    const bool feeds_next = it + 1 < c.iterations, faults = c.error_rate > 0;
    const std::size_t steps = c.steps;
    const double courant = c.courant;
    const std::uint64_t key = it * g.n + g.lo + k;
    const auto& l = k > 0 ? f.cur[k - 1] : (g.remote ? f.left_ghost : f.cur[g.local - 1]);
    const auto& m = f.cur[k];
    const auto& r = k + 1 < g.local ? f.cur[k + 1] : (g.remote ? f.right_ghost : f.cur[0]);
    // The edges of this rank's block go to the neighbours from inside the
    // task: in a resilient task they leave only once its result is accepted,
    // so a corrupted partition never crosses ranks.
    const bool to_left = g.remote && feeds_next && k == 0, to_right = g.remote && feeds_next && k + 1 == g.local;
    const bool reports = c.distributed && k == 0;  // the rank's progress, for reports and --kill R@iterN
    const int left_rank = g.left_rank, right_rank = g.right_rank;
    auto send_edges = [=](const partition& p) {
        if (reports) recovery::report_iteration(it);
        if (to_left) comm::isend(left_rank, tag_head_to_left, slice(p, 0, steps).values);
        if (to_right) comm::isend(right_rank, tag_tail_to_right, slice(p, p.values.size() - steps, steps).values);
    };
    // Every variant computes the same partition; they differ in how a fault
    // is made and caught.
    auto compute_and_corrupt = [&inject, faults, key, steps, courant, send_edges](const auto& l, const auto& m,
                                                                                  const auto& r) {
        partition p = advance(l.get(), m.get(), r.get(), steps, courant);
        if (faults) inject.maybe_flip_bit(p.values, key);  // after the checksum: silent corruption
        send_edges(p);
        return p;
    };
    auto throw_or_compute = [&inject, faults, key, steps, courant, send_edges](const auto& l, const auto& m,
                                                                               const auto& r) {
        if (faults) inject.maybe_throw(key);
        partition p = advance(l.get(), m.get(), r.get(), steps, courant);
        send_edges(p);
        return p;
    };
    switch (c.kind) {
        case variant::dataflow:
            return dataflow(compute_and_corrupt, l, m, r).share();
        case variant::replay:
            return dataflow_replay(c.replays, throw_or_compute, l, m, r).share();
        case variant::replay_checksum:
            return dataflow_replay_validate(c.replays, checksum_matches, compute_and_corrupt, l, m, r).share();
        case variant::replicate_vote:
            return dataflow_replicate_replay(3, c.replays, majority_vote{}, compute_and_corrupt, l, m, r).share();
    }
    throw rampart::invalid_argument("stencil: unknown variant");
}

// Runs iterations [start, c.iterations): a graph of tasks, ghosts received
// from the neighbours, and checkpoints.
void iterate(const config& c, const layout& g, field& f, std::size_t start, rampart::store::checkpoints* cp,
             fault_injector& inject) {
    for (std::size_t it = start; it < c.iterations; ++it) {
        std::vector<shared_future<partition>> next(g.local);
        for (std::size_t k = 0; k < g.local; ++k) next[k] = advance_task(c, g, f, it, k, inject);
        f.cur = std::move(next);
        const bool feeds_next = it + 1 < c.iterations;
        if (g.remote && feeds_next) {
            f.left_ghost = ghost_from(g.left_rank, tag_tail_to_right);
            f.right_ghost = ghost_from(g.right_rank, tag_head_to_left);
        }
        if (cp && feeds_next && (it + 1) % c.checkpoint_every == 0) {
            // The one point where this rank waits for its whole iteration.
            saved_state st;
            for (auto& p : f.cur) st.parts.push_back(p.get().values);
            st.left = f.left_ghost.get().values;
            st.right = f.right_ghost.get().values;
            cp->save(it, st);
        }
    }
    for (auto& p : f.cur) p.wait();
}

void hash_partitions(XXH3_state_t* h, const std::vector<shared_future<partition>>& parts) {
    for (auto& p : parts) XXH3_64bits_update(h, p.get().values.data(), p.get().values.size() * sizeof(double));
}

// Rank 0 hashes the whole field in global order and sums the counters; the
// others send their partitions and counts to it.
void gather_on_rank0(const layout& g, const field& f, result& res) {
    const auto micro = [](double s) { return static_cast<std::uint64_t>(s * 1e6); };
    // The app's own faults, the CPU times, then the runtime's counters.
    std::array<std::uint64_t, 3 + counters::field_count> mine{res.faults_injected, micro(res.cpu_seconds),
                                                              micro(res.comm_cpu_seconds)};
    const auto stats = res.stats.to_array();
    std::copy(stats.begin(), stats.end(), mine.begin() + 3);
    if (g.me != 0) {
        for (auto& p : f.cur) comm::isend(0, tag_gather, p.get().values).get();
        comm::isend(0, tag_counts, mine).get();
        return;
    }
    XXH3_state_t* h = XXH3_createState();
    XXH3_64bits_reset(h);
    hash_partitions(h, f.cur);
    auto total = mine;
    for (int r = 1; r < g.ranks; ++r) {
        for (std::size_t k = g.first_of(r); k < g.first_of(r + 1); ++k) {
            auto v = comm::irecv<std::vector<double>>(r, tag_gather).get();
            XXH3_64bits_update(h, v.data(), v.size() * sizeof(double));
        }
        auto theirs = comm::irecv<decltype(mine)>(r, tag_counts).get();
        for (std::size_t j = 0; j < total.size(); ++j) total[j] += theirs[j];
    }
    res.checksum = apps::hex64(XXH3_64bits_digest(h));
    XXH3_freeState(h);
    res.faults_injected = total[0];
    res.cpu_seconds = 1e-6 * static_cast<double>(total[1]);
    res.comm_cpu_seconds = 1e-6 * static_cast<double>(total[2]);
    std::array<std::uint64_t, counters::field_count> sum{};
    std::copy(total.begin() + 3, total.end(), sum.begin());
    res.stats = counters::from_array(sum);
}

}  // namespace

result run(const config& c) {
    check(c);
    const layout g(c);
    field f = initial_field(c, g);
    std::optional<rampart::store::checkpoints> cp;
    std::size_t start = 0;
    if (g.remote && c.checkpoint_every > 0) {
        // The same slot on every rank: room for the widest share of subdomains.
        const std::size_t widest = (g.n + static_cast<std::size_t>(g.ranks) - 1) / static_cast<std::size_t>(g.ranks);
        cp.emplace(widest * (c.points * sizeof(double) + 16) + 2 * (c.steps * sizeof(double) + 16) + 64);
        start = resume(*cp, g, f);
    }
    fault_injector inject(c.error_rate, c.seed);
    const counters before = read_counters();
    const double cpu0 = process_cpu_seconds();
    const double comm_cpu0 = g.remote ? comm::counters().cpu_seconds : 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    iterate(c, g, f, start, cp ? &*cp : nullptr, inject);

    result res;
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.cpu_seconds = process_cpu_seconds() - cpu0;
    if (g.remote) res.comm_cpu_seconds = comm::counters().cpu_seconds - comm_cpu0;
    res.faults_injected = inject.injected();
    res.stats = read_counters() - before;
    if (g.remote) {
        gather_on_rank0(g, f, res);
        return res;
    }
    XXH3_state_t* h = XXH3_createState();
    XXH3_64bits_reset(h);
    hash_partitions(h, f.cur);
    res.checksum = apps::hex64(XXH3_64bits_digest(h));
    XXH3_freeState(h);
    return res;
}

}  // namespace rampart::stencil
