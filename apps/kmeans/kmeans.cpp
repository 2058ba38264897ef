#include "kmeans.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/placement.hpp>
#include <rampart/store/store.hpp>

#include "../common/hex.hpp"
#include "../common/mix.hpp"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>
#include <map>
#include <thread>

namespace rampart::kmeans {

namespace {

using apps::mix;

double unit(std::uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }  // [0, 1)

using steady = std::chrono::steady_clock;
double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

/// Chunk k holds points [k * size, min(points, (k + 1) * size)).
struct chunking {
    std::uint64_t points, size, count;
    explicit chunking(const config& c)
        : points(c.points), size(std::min(c.chunk_points, c.points)), count((points + size - 1) / size) {}
    std::uint64_t first(std::uint64_t k) const { return k * size; }
    std::uint64_t length(std::uint64_t k) const { return std::min(size, points - k * size); }
};

std::vector<double> generate_chunk(const config& c, const chunking& g, std::uint64_t k) {
    std::vector<double> v(g.length(k) * c.dims);
    make_points(c, g.first(k), g.length(k), v);
    return v;
}

/// The first `clusters` points: every rank makes them without a message.
std::vector<double> initial_centers(const config& c) {
    std::vector<double> v(c.clusters * c.dims);
    make_points(c, 0, c.clusters, v);
    return v;
}

/// The partials of chunks whose points are given, computed as parallel tasks.
std::vector<chunk_partial> partials_of(const std::vector<const std::vector<double>*>& points,
                                       const std::vector<double>& centers, const config& c) {
    std::vector<future<chunk_partial>> work;
    work.reserve(points.size());
    for (const std::vector<double>* p : points)
        work.push_back(async([p, &centers, &c] { return assign_chunk(*p, centers, c.dims, c.clusters); }));
    std::vector<chunk_partial> out;
    out.reserve(work.size());
    for (auto& f : work) out.push_back(f.get());
    return out;
}

result make_result(const chunking& g, const std::vector<std::uint64_t>& digests, std::vector<double> centers) {
    result r;
    r.chunk_points = g.size;
    const std::uint64_t a = XXH3_64bits(digests.data(), digests.size() * sizeof(std::uint64_t));
    const std::uint64_t z = XXH3_64bits(centers.data(), centers.size() * sizeof(double));
    const std::uint64_t both[2] = {a, z};
    r.assignments = apps::hex64(a);
    r.centers_hash = apps::hex64(z);
    r.checksum = apps::hex64(XXH3_64bits(both, sizeof both));
    r.centers = std::move(centers);
    r.chunks = digests.size();
    return r;
}

/// One process, every chunk: the reference that every distributed run equals.
result run_local(const config& c) {
    const auto t0 = steady::now();
    const chunking g(c);
    std::vector<std::vector<double>> points(g.count);
    std::vector<const std::vector<double>*> all;
    for (std::uint64_t k = 0; k < g.count; ++k) {
        points[k] = generate_chunk(c, g, k);
        all.push_back(&points[k]);
    }
    std::vector<double> centers = initial_centers(c);
    std::vector<std::uint64_t> digests(g.count);
    for (std::size_t it = 0; it < c.iterations; ++it) {
        const std::vector<chunk_partial> partials = partials_of(all, centers, c);
        centers = update_centers(partials, centers, c.dims, c.clusters);
        for (std::uint64_t k = 0; k < g.count; ++k) digests[k] = partials[k].assignment_digest;
    }
    result r = make_result(g, digests, std::move(centers));
    r.seconds = seconds_since(t0);
    return r;
}

// ---------------------------------------------------------------------------
// The distributed run with shrinking recovery.
//
// Epochs. The ranks lost so far (acknowledged with recovery::acknowledge_losses)
// define an epoch, numbered by their count; every message carries its epoch
// in its tag, so that a message of an epoch its receiver has left never
// matches a receive of a later one. The set of lost ranks grows the same way
// on every rank (the runtime agrees on it), so two ranks in the same epoch
// see the same lost ranks and the same owners of every chunk.
//
// Recovery. When a receive fails (a rank is lost), the rank acknowledges the
// losses, tells every living rank which iteration it is in and learns
// theirs. Ranks are at most one iteration apart (a rank finishes iteration i
// only with every living rank's partials of i), so each rank at the highest
// iteration rolls back to the lowest, with the centers it kept. The chunks of
// lost ranks get new owners, which load their points from the store, and the
// run goes on. A failure during a recovery starts it again in a new epoch.
//
// The store's load is collective and matched by its order on every rank, so
// each rank makes exactly one load per epoch: empty when its exchange of
// iterations failed, and for each epoch it skipped (two ranks lost in one
// step of the runtime on this rank, in two steps on another).
// ---------------------------------------------------------------------------

/// A rank's state, exchanged in recoveries and at the end.
struct status {
    std::uint64_t iteration = 0;        ///< the next iteration it computes; `iterations` once finished
    std::uint64_t points_reloaded = 0;  ///< loaded from the store so far
};

enum class message { status_sync = 0, partial = 1, finish = 2 };
constexpr int message_kinds = 3;

/// Pieces of the partials that travel in one message, in 64-bit words.
/// Open MPI sends a message up to its eager limit (4 KiB over shared memory)
/// without waiting for the receiver. A piece sent in an epoch that its
/// receiver has left stays unreceived forever; small, it completes all the
/// same, whereas a larger send would wait for a receive that never comes and
/// keep its sender from ending.
constexpr std::size_t piece_words = 256;

/// How long a rank whose receive failed waits for the runtime to name the lost
/// rank (it fails receives a moment before it publishes the lost set).
constexpr auto loss_wait = std::chrono::seconds(30);

std::size_t record_words(const config& c) { return 1 + c.clusters + c.clusters * c.dims; }

void pack(const chunk_partial& p, std::vector<std::uint64_t>& out) {
    out.push_back(p.assignment_digest);
    out.insert(out.end(), p.counts.begin(), p.counts.end());
    for (double s : p.sums) out.push_back(std::bit_cast<std::uint64_t>(s));
}

chunk_partial unpack(const std::uint64_t* w, const config& c) {
    chunk_partial p;
    p.assignment_digest = w[0];
    p.counts.assign(w + 1, w + 1 + c.clusters);
    p.sums.resize(c.clusters * c.dims);
    for (std::size_t j = 0; j < p.sums.size(); ++j) p.sums[j] = std::bit_cast<double>(w[1 + c.clusters + j]);
    return p;
}

std::string ranks_text(const std::vector<int>& ranks) {
    std::string s;
    for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
}

class shrinking_run {
public:
    explicit shrinking_run(const config& c);
    result run();

private:
    int tag(message m) const { return 1 + static_cast<int>(epoch_) * message_kinds + static_cast<int>(m); }
    bool is_lost(int q) const { return std::binary_search(lost_.begin(), lost_.end(), q); }
    std::vector<int> others() const;  // the living ranks but this one
    void assign_owners();
    void submit();
    void iterate();
    std::vector<status> exchange_status(message m);
    bool recover(std::string why);
    void await_losses(const std::string& why);
    void check_recoverable() const;
    void take_over();
    void load_nothing() { store_.load(std::span<const store::id_range>{}); }

    const config c_;
    const chunking g_;
    const int me_, p_;
    store::store store_;
    std::vector<int> first_owner_;                       // chunk -> the rank that made and submitted its points
    std::vector<int> owner_;                             // chunk -> the rank that computes it in this epoch
    std::vector<std::vector<std::uint64_t>> chunks_of_;  // rank -> its chunks, ascending
    std::vector<int> lost_;                              // acknowledged, sorted
    std::size_t epoch_ = 0;                              // lost_.size() once recovered; store loads made
    std::map<std::uint64_t, std::vector<double>> held_;  // chunk -> its points, for the chunks owned
    std::uint64_t it_ = 0;
    std::vector<double> centers_, previous_;  // at the start of iteration it_, and of it_ - 1
    std::vector<std::uint64_t> digests_;      // the chunks' assignment digests of iteration it_ - 1
    std::uint64_t reloaded_ = 0, recoveries_ = 0;
    double recovery_seconds_ = 0;
    std::vector<status> final_;  // every living rank's status at the end
};

shrinking_run::shrinking_run(const config& c)
    : c_(c),
      g_(c),
      me_(comm::rank()),
      p_(comm::size()),
      // A permutation range per chunk: the chunks of a dead rank are spread
      // over many holders, which then serve its survivors' loads together.
      store_(c.dims * sizeof(double),
             {.replicas = c.replicas, .permutation_range_bytes = g_.size * c.dims * sizeof(double), .seed = c.seed}),
      centers_(initial_centers(c)),
      digests_(g_.count) {
    // Rank r first owns chunks [C r / p, C (r + 1) / p).
    first_owner_.resize(g_.count);
    for (int r = 0; r < p_; ++r)
        for (std::uint64_t k = g_.count * static_cast<std::uint64_t>(r) / static_cast<std::uint64_t>(p_);
             k < g_.count * static_cast<std::uint64_t>(r + 1) / static_cast<std::uint64_t>(p_); ++k)
            first_owner_[k] = r;
    assign_owners();
}

std::vector<int> shrinking_run::others() const {
    std::vector<int> v;
    for (int q = 0; q < p_; ++q)
        if (q != me_ && !is_lost(q)) v.push_back(q);
    return v;
}

// A chunk stays with its first owner while that rank lives. The chunks of
// the lost ranks, in chunk order, are cut into as many nearly equal runs as
// there are living ranks, and the i-th living rank takes the i-th run. The
// rule depends on the set of lost ranks alone, so all ranks agree on it.
void shrinking_run::assign_owners() {
    owner_ = first_owner_;
    std::vector<int> living;
    for (int q = 0; q < p_; ++q)
        if (!is_lost(q)) living.push_back(q);
    std::vector<std::uint64_t> orphans;
    for (std::uint64_t k = 0; k < g_.count; ++k)
        if (is_lost(first_owner_[k])) orphans.push_back(k);
    for (std::size_t i = 0; i < orphans.size(); ++i) owner_[orphans[i]] = living[i * living.size() / orphans.size()];
    chunks_of_.assign(static_cast<std::size_t>(p_), {});
    for (std::uint64_t k = 0; k < g_.count; ++k) chunks_of_[static_cast<std::size_t>(owner_[k])].push_back(k);
}

void shrinking_run::submit() {
    std::vector<store::block_run> runs;
    for (std::uint64_t k : chunks_of_[static_cast<std::size_t>(me_)]) {
        const std::vector<double>& pts = held_[k] = generate_chunk(c_, g_, k);
        runs.push_back({g_.first(k), std::as_bytes(std::span(pts))});
    }
    store_.submit(runs, c_.points);
    // An empty load ends on a rank only once every rank has ended its
    // submit: the points are complete in the store before the first
    // iteration, where injected kills happen (a rank dying during the submit
    // would make the store abandon it, and there is no version to load then).
    load_nothing();
}

void shrinking_run::iterate() {
    recovery::report_iteration(it_);
    const std::size_t words = record_words(c_);
    const std::vector<int> peers = others();
    // Receives first, so that the peers' pieces find them waiting.
    std::vector<std::pair<int, std::vector<future<std::vector<std::uint64_t>>>>> incoming;
    for (int q : peers) {
        const std::size_t n = (chunks_of_[static_cast<std::size_t>(q)].size() * words + piece_words - 1) / piece_words;
        auto& pieces = incoming.emplace_back(q, std::vector<future<std::vector<std::uint64_t>>>{}).second;
        for (std::size_t i = 0; i < n; ++i)
            pieces.push_back(comm::irecv<std::vector<std::uint64_t>>(q, tag(message::partial)));
    }

    const std::vector<std::uint64_t>& mine = chunks_of_[static_cast<std::size_t>(me_)];
    std::vector<const std::vector<double>*> points;
    for (std::uint64_t k : mine) points.push_back(&held_.at(k));
    std::vector<chunk_partial> computed = partials_of(points, centers_, c_);

    std::vector<std::uint64_t> flat;
    flat.reserve(mine.size() * words);
    for (const chunk_partial& p : computed) pack(p, flat);
    for (std::size_t i = 0, at = 0; at < flat.size(); ++i, at += piece_words) {
        std::vector<std::uint64_t> piece{it_, i};
        piece.insert(piece.end(), flat.begin() + static_cast<std::ptrdiff_t>(at),
                     flat.begin() + static_cast<std::ptrdiff_t>(std::min(flat.size(), at + piece_words)));
        for (int q : peers) comm::isend(q, tag(message::partial), piece);
    }

    std::vector<chunk_partial> all(g_.count);
    for (std::size_t i = 0; i < mine.size(); ++i) all[mine[i]] = std::move(computed[i]);
    for (auto& [q, pieces] : incoming) {
        const std::vector<std::uint64_t>& theirs = chunks_of_[static_cast<std::size_t>(q)];
        flat.clear();
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            std::vector<std::uint64_t> piece = pieces[i].get();  // a lost rank: comm_error, to the caller
            if (piece.size() < 2 || piece[0] != it_ || piece[1] != i)
                throw rampart::error("kmeans: rank " + std::to_string(q) + " sent a piece that is not piece " +
                                     std::to_string(i) + " of iteration " + std::to_string(it_) + " (epoch " +
                                     std::to_string(epoch_) + ")");
            flat.insert(flat.end(), piece.begin() + 2, piece.end());
        }
        if (flat.size() != theirs.size() * words)
            throw rampart::error("kmeans: rank " + std::to_string(q) + " sent " + std::to_string(flat.size()) +
                                 " words of partials for its " + std::to_string(theirs.size()) + " chunks, expected " +
                                 std::to_string(theirs.size() * words));
        for (std::size_t j = 0; j < theirs.size(); ++j) all[theirs[j]] = unpack(flat.data() + j * words, c_);
    }

    // Only now, with every partial here, does the state move on: a failure
    // above leaves this rank at iteration it_ with its centers.
    previous_ = std::move(centers_);
    centers_ = update_centers(all, previous_, c_.dims, c_.clusters);
    for (std::uint64_t k = 0; k < g_.count; ++k) digests_[k] = all[k].assignment_digest;
    ++it_;
}

std::vector<status> shrinking_run::exchange_status(message m) {
    const status mine{it_, reloaded_};
    const std::vector<int> peers = others();
    std::vector<future<status>> incoming;
    for (int q : peers) incoming.push_back(comm::irecv<status>(q, tag(m)));
    for (int q : peers) comm::isend(q, tag(m), mine);
    std::vector<status> all{mine};
    for (auto& f : incoming) all.push_back(f.get());
    return all;
}

result shrinking_run::run() {
    const auto t0 = steady::now();
    submit();
    const double submit_seconds = seconds_since(t0);
    for (;;) {
        try {
            if (it_ < c_.iterations) {
                iterate();
                continue;
            }
            // Finished: end once every living rank has, as a rank still in
            // the last iteration may need this one to recover.
            final_ = exchange_status(message::finish);
            break;
        } catch (const comm::comm_error& e) {
            if (recover(e.what())) break;
        }
    }
    result r = make_result(g_, digests_, centers_);
    r.seconds = seconds_since(t0);
    r.submit_seconds = submit_seconds;
    r.recovery_seconds = recovery_seconds_;
    r.recoveries = recoveries_;
    r.ranks = p_;
    r.replicas = store_.replicas();
    r.lost_ranks = lost_;
    r.reporter = others().empty() || others().front() > me_;
    for (const status& s : final_) r.points_reloaded += s.points_reloaded;
    return r;
}

// Returns true when every living rank had finished: the run is over.
bool shrinking_run::recover(std::string why) {
    const auto t0 = steady::now();
    ++recoveries_;
    for (;;) {
        await_losses(why);
        check_recoverable();
        while (epoch_ + 1 < lost_.size()) {  // epochs this rank skipped: their loads
            ++epoch_;
            load_nothing();
        }
        epoch_ = lost_.size();
        std::vector<status> all;
        try {
            all = exchange_status(message::status_sync);
        } catch (const comm::comm_error& e) {
            // Another rank died meanwhile. The ranks whose exchange went
            // through make this epoch's load; so does this one, with nothing.
            why = e.what();
            load_nothing();
            continue;
        }
        const std::uint64_t lowest = std::min_element(all.begin(), all.end(), [](auto& a, auto& b) {
                                         return a.iteration < b.iteration;
                                     })->iteration;
        if (it_ > lowest + 1)
            throw rampart::error("kmeans: rank " + std::to_string(me_) + " is at iteration " + std::to_string(it_) +
                                 ", another living rank at " + std::to_string(lowest) +
                                 ": more than one iteration apart");
        if (it_ > lowest) {
            // Roll back. Every living rank is at `lowest` now, so none will
            // roll back again before iterating: one older set of centers is
            // all a rank keeps.
            it_ = lowest;
            centers_ = previous_;
        }
        const bool over = lowest == c_.iterations;
        if (over) {
            final_ = std::move(all);
            load_nothing();
        } else {
            assign_owners();
            take_over();
        }
        recovery_seconds_ += seconds_since(t0);
        return over;
    }
}

// The runtime fails every waiting receive as soon as it has found a lost
// rank, a moment before it publishes the new set of lost ranks.
void shrinking_run::await_losses(const std::string& why) {
    if (recovery::wait_for_losses(loss_wait).size() <= lost_.size())
        throw comm::comm_error("kmeans: " + why + " (and no rank was lost)");
    lost_ = recovery::acknowledge_losses();
}

// When every copy of some of the lost ranks' points is gone the run cannot go
// on. Each rank decides it from the set of lost ranks and the store's
// placement alone, so all stop with the same error instead of the one rank
// whose load fails stopping while the others wait for it.
void shrinking_run::check_recoverable() const {
    const store::placement where = store_.placement_of(c_.points);
    for (std::uint64_t k = 0; k < g_.count; ++k) {
        if (!is_lost(first_owner_[k])) continue;
        for (const store::placement_unit& u : where.units(g_.first(k), g_.length(k))) {
            bool copy_left = false;
            for (int j = 0; j < store_.replicas(); ++j) copy_left |= !is_lost(where.holder_of_copy(u.first_holder, j));
            if (!copy_left)
                throw store::store_error("kmeans: every copy of points [" + std::to_string(u.first_id) + ", " +
                                             std::to_string(u.first_id + u.count) + ") was on the lost ranks " +
                                             ranks_text(lost_) + "; the run cannot go on",
                                         {{u.first_id, u.count}});
        }
    }
}

// Loads the points of the chunks this rank owns now and does not hold, in
// this epoch's load, and drops those it has given up.
void shrinking_run::take_over() {
    std::vector<std::uint64_t> wanted;
    std::vector<store::id_range> ranges;
    for (std::uint64_t k : chunks_of_[static_cast<std::size_t>(me_)]) {
        if (held_.count(k)) continue;
        wanted.push_back(k);
        if (!ranges.empty() && ranges.back().first + ranges.back().count == g_.first(k))
            ranges.back().count += g_.length(k);
        else
            ranges.push_back({g_.first(k), g_.length(k)});
    }
    std::erase_if(held_, [&](const auto& kv) { return owner_[kv.first] != me_; });
    const std::vector<double> points = store_.load_as<double>(ranges);
    std::size_t at = 0;
    for (std::uint64_t k : wanted) {
        const std::size_t n = g_.length(k) * c_.dims;
        std::vector<double>& v = held_[k];
        v.assign(points.begin() + static_cast<std::ptrdiff_t>(at),
                 points.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
        reloaded_ += g_.length(k);
        if (c_.verify && v != generate_chunk(c_, g_, k))
            throw rampart::error("kmeans: the store returned other points for chunk " + std::to_string(k) +
                                 " (points [" + std::to_string(g_.first(k)) + ", " +
                                 std::to_string(g_.first(k) + g_.length(k)) + "))");
    }
}

}  // namespace

void validate(const config& c) {
    auto fail = [](const std::string& what) { throw rampart::invalid_argument("kmeans: " + what); };
    if (c.dims < 1) fail("--dims must be at least 1");
    if (c.clusters < 1) fail("--clusters must be at least 1");
    if (c.iterations < 1) fail("--iterations must be at least 1");
    if (c.chunk_points < 1) fail("--chunk-points must be at least 1");
    if (c.points < c.clusters)
        fail("--points (" + std::to_string(c.points) + ") must be at least --clusters (" + std::to_string(c.clusters) +
             "): the first points are the initial centers");
    if (c.replicas < 0) fail("--replicas must not be negative");
}

void make_points(const config& c, std::uint64_t first, std::uint64_t count, std::span<double> out) {
    if (out.size() != count * c.dims)
        throw rampart::invalid_argument("kmeans::make_points: room for " + std::to_string(out.size()) +
                                        " coordinates, not " + std::to_string(count * c.dims));
    const std::uint64_t key = mix(c.seed ^ 0x6a09e667f3bcc909ULL);  // nearby seeds give unrelated points
    for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t h = mix(key + (first + i) * 0x9e3779b97f4a7c15ULL);
        const std::uint64_t cluster = h % c.clusters;
        for (std::size_t d = 0; d < c.dims; ++d) {
            const double center = 100.0 * unit(mix(~key + cluster * c.dims + d));
            out[i * c.dims + d] = center + 10.0 * unit(mix(h + d + 1)) - 5.0;
        }
    }
}

chunk_partial assign_chunk(std::span<const double> points, std::span<const double> centers, std::size_t dims,
                           std::size_t clusters) {
    if (dims == 0 || points.size() % dims != 0 || centers.size() != clusters * dims)
        throw rampart::invalid_argument("kmeans::assign_chunk: " + std::to_string(points.size()) + " coordinates and " +
                                        std::to_string(centers.size()) + " center coordinates do not fit " +
                                        std::to_string(clusters) + " clusters of " + std::to_string(dims) + " dims");
    const std::size_t n = points.size() / dims;
    chunk_partial p;
    p.counts.assign(clusters, 0);
    p.sums.assign(clusters * dims, 0.0);
    std::vector<std::uint32_t> assigned(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double* x = points.data() + i * dims;
        std::size_t best = 0;
        double best_distance = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < clusters; ++k) {
            double distance = 0;
            for (std::size_t d = 0; d < dims; ++d) {
                const double diff = x[d] - centers[k * dims + d];
                distance += diff * diff;
            }
            if (distance < best_distance) {
                best_distance = distance;
                best = k;
            }
        }
        assigned[i] = static_cast<std::uint32_t>(best);
        ++p.counts[best];
        for (std::size_t d = 0; d < dims; ++d) p.sums[best * dims + d] += x[d];
    }
    p.assignment_digest = XXH3_64bits(assigned.data(), n * sizeof(std::uint32_t));
    return p;
}

std::vector<double> update_centers(const std::vector<chunk_partial>& partials, std::span<const double> centers,
                                   std::size_t dims, std::size_t clusters) {
    std::vector<double> sums(clusters * dims, 0.0);
    std::vector<std::uint64_t> counts(clusters, 0);
    for (const chunk_partial& p : partials) {
        if (p.counts.size() != clusters || p.sums.size() != clusters * dims)
            throw rampart::invalid_argument("kmeans::update_centers: a partial of " + std::to_string(p.counts.size()) +
                                            " clusters and " + std::to_string(p.sums.size()) + " sums");
        for (std::size_t j = 0; j < sums.size(); ++j) sums[j] += p.sums[j];
        for (std::size_t k = 0; k < clusters; ++k) counts[k] += p.counts[k];
    }
    std::vector<double> next(centers.begin(), centers.end());
    for (std::size_t k = 0; k < clusters; ++k)
        if (counts[k] > 0)
            for (std::size_t d = 0; d < dims; ++d)
                next[k * dims + d] = sums[k * dims + d] / static_cast<double>(counts[k]);
    return next;
}

result run(const config& c) {
    validate(c);
    if (!c.distributed) return run_local(c);
    return shrinking_run(c).run();
}

}  // namespace rampart::kmeans
