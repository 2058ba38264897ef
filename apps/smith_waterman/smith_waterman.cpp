#include "smith_waterman.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/recovery/recovery.hpp>

#include <rampart/store/checkpoint.hpp>

#include "../common/hex.hpp"
#include "../common/mix.hpp"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>

namespace rampart::smith_waterman {

namespace {
using apps::mix;
}  // namespace

std::string make_sequence(std::size_t length, std::uint64_t seed) {
    std::string s(length, 'A');
    std::uint64_t x = mix(seed ^ 0x632be59bd9b4e019ULL);  // nearby seeds give unrelated streams
    for (std::size_t i = 0; i < length; ++i) {
        x += 0x9e3779b97f4a7c15ULL;
        s[i] = "ACGT"[mix(x) & 3];
    }
    return s;
}

tile_edges score_tile(const std::string& a, const std::string& b, std::size_t r0, std::size_t r1, std::size_t c0,
                      std::size_t c1, const std::vector<std::int32_t>& top, const std::vector<std::int32_t>& left) {
    const std::size_t h = r1 - r0, w = c1 - c0;
    if (r1 <= r0 || c1 <= c0 || r1 > a.size() || c1 > b.size() || top.size() != w || left.size() != h + 1)
        throw rampart::invalid_argument("smith-waterman: tile [" + std::to_string(r0) + "," + std::to_string(r1) +
                                        ")x[" + std::to_string(c0) + "," + std::to_string(c1) + ") got " +
                                        std::to_string(top.size()) + " cells above and " + std::to_string(left.size()) +
                                        " to the left");
    tile_edges out;
    out.right.resize(h + 1);
    out.right[0] = top[w - 1];
    std::vector<std::int32_t> prev(w + 1), row(w + 1);
    prev[0] = left[0];
    std::copy(top.begin(), top.end(), prev.begin() + 1);
    for (std::size_t i = 0; i < h; ++i) {
        row[0] = left[i + 1];
        const char ai = a[r0 + i];
        const char* bj = b.data() + c0;
        for (std::size_t j = 1; j <= w; ++j) {
            const std::int32_t diag = prev[j - 1] + (ai == bj[j - 1] ? match_score : mismatch_score);
            const std::int32_t v = std::max({0, diag, prev[j] + gap_score, row[j - 1] + gap_score});
            row[j] = v;
            if (v > out.best) {
                out.best = v;
                out.best_row = static_cast<std::uint32_t>(r0 + i);
                out.best_col = static_cast<std::uint32_t>(c0 + j - 1);
            }
        }
        out.right[i + 1] = row[w];
        std::swap(prev, row);
    }
    out.bottom.assign(prev.begin() + 1, prev.end());
    return out;
}

namespace {
bool better(std::int32_t score, std::uint32_t row, std::uint32_t col, const alignment_end& than) {
    if (score != than.score) return score > than.score;
    return row != than.row ? row < than.row : col < than.col;
}
}  // namespace

alignment_end score_whole(const std::string& a, const std::string& b) {
    std::vector<std::int32_t> zeros_top(b.size(), 0), zeros_left(a.size() + 1, 0);
    tile_edges t = score_tile(a, b, 0, a.size(), 0, b.size(), zeros_top, zeros_left);
    return {t.best, t.best_row, t.best_col};
}

variant parse_variant(const std::string& name) {
    if (name == "baseline") return variant::baseline;
    if (name == "replay") return variant::replay;
    if (name == "replicate") return variant::replicate;
    throw rampart::invalid_argument("smith-waterman: unknown variant '" + name + "' (baseline, replay, replicate)");
}

std::string to_string(variant v) {
    switch (v) {
        case variant::baseline:
            return "baseline";
        case variant::replay:
            return "replay";
        case variant::replicate:
            return "replicate";
    }
    return "?";
}

std::string fault_kind(variant v) { return v == variant::replay ? "exception" : "bitflip"; }

namespace {

constexpr int tag_edge = 1;     // right column of my last tile of a tile row, for my right neighbour
constexpr int tag_digests = 2;  // tile digests, to rank 0
constexpr int tag_summary = 3;  // best cell and counters, to rank 0

std::uint64_t digest(const tile_edges& t) {
    XXH3_state_t* h = XXH3_createState();
    XXH3_64bits_reset(h);
    XXH3_64bits_update(h, t.bottom.data(), t.bottom.size() * sizeof(std::int32_t));
    XXH3_64bits_update(h, t.right.data(), t.right.size() * sizeof(std::int32_t));
    const std::array<std::uint32_t, 3> best{static_cast<std::uint32_t>(t.best), t.best_row, t.best_col};
    XXH3_64bits_update(h, best.data(), sizeof best);
    const std::uint64_t d = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    return d;
}

// What a rank saves at a checkpoint after tile row `ti`: the bottom rows of
// its tiles of that row (the tops of the next), the digests of its tiles so
// far and its best cell. The edges it sent right for that row have been
// received by then, which makes the saves of all ranks a consistent cut.
struct saved_state {
    std::vector<std::vector<std::int32_t>> bottoms;
    std::vector<std::uint64_t> digests;
    std::int32_t best = 0;
    std::uint32_t best_row = 0, best_col = 0;
    template <class Archive>
    void serialize(Archive& a) {
        a(bottoms, digests, best, best_row, best_col);
    }
};

}  // namespace

namespace {

// One rank's part of the wavefront: tile columns [lo, hi) of every tile row,
// its tasks, its checkpoints, and the digests it gathers for the checksum.
class wavefront {
public:
    explicit wavefront(const config& c)
        : c_(c),
          a_(make_sequence(c.length_a, c.input_seed)),
          b_(make_sequence(c.length_b, c.input_seed + 1)),
          T_(c.tile),
          rows_((c.length_a + T_ - 1) / T_),
          cols_((c.length_b + T_ - 1) / T_),
          ranks_(c.distributed ? comm::size() : 1),
          me_(c.distributed ? comm::rank() : 0),
          inject_(c.error_rate, c.seed) {
        if (static_cast<std::size_t>(ranks_) > cols_)
            throw rampart::invalid_argument("smith-waterman: more ranks (" + std::to_string(ranks_) +
                                            ") than tile columns (" + std::to_string(cols_) + ")");
        lo_ = first_of(me_);
        local_ = first_of(me_ + 1) - lo_;
        grid_.assign(rows_, std::vector<shared_future<tile_edges>>(local_));
        digests_.reserve(rows_ * local_);
    }

    result run() {
        const counters before = read_counters();
        const auto t0 = std::chrono::steady_clock::now();
        std::optional<rampart::store::checkpoints> cp;
        std::size_t start = 0;
        if (c_.distributed && ranks_ > 1 && c_.checkpoint_every > 0) {
            // The same slot on every rank: room for the widest share of tile columns.
            const std::size_t widest = (cols_ + static_cast<std::size_t>(ranks_) - 1) / static_cast<std::size_t>(ranks_);
            cp.emplace(widest * (T_ * sizeof(std::int32_t) + 16) + rows_ * widest * sizeof(std::uint64_t) + 64);
            start = resume(*cp);
        }
        for (std::size_t ti = start; ti < rows_; ++ti) {
            tile_row(ti, start);
            if (cp && ti + 1 < rows_ && (ti + 1) % c_.checkpoint_every == 0) save(*cp, ti);
        }
        digest_rows_up_to(rows_);
        result res;
        res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        res.faults_injected = inject_.injected();
        res.stats = read_counters() - before;
        res.end = best_;
        gather(res);
        return res;
    }

private:
    std::size_t first_of(int rank) const {
        return cols_ * static_cast<std::size_t>(rank) / static_cast<std::size_t>(ranks_);
    }
    std::size_t rows_of(std::size_t ti) const { return std::min(T_, c_.length_a - ti * T_); }
    std::size_t cols_of(std::size_t tj) const { return std::min(T_, c_.length_b - tj * T_); }

    // Digests and the best cell of the tile rows done: rows [0, digested_).
    void digest_rows_up_to(std::size_t end) {
        for (; digested_ < end; ++digested_)
            for (std::size_t k = 0; k < local_; ++k) {
                const tile_edges& t = grid_[digested_][k].get();
                digests_.push_back(digest(t));
                if (better(t.best, t.best_row, t.best_col, best_)) best_ = {t.best, t.best_row, t.best_col};
            }
    }

    // A replacement resumes after the newest checkpoint: the tile row to start at.
    std::size_t resume(rampart::store::checkpoints& cp) {
        auto back = cp.restore<saved_state>();
        if (!back) return 0;
        restored_tops_ = std::move(back->state.bottoms);
        digests_ = std::move(back->state.digests);
        best_ = {back->state.best, back->state.best_row, back->state.best_col};
        digested_ = static_cast<std::size_t>(back->iteration) + 1;
        std::fprintf(stderr,
                     "rampart-smith-waterman: rank %d resumes after iteration %llu (tile row) from a checkpoint\n", me_,
                     static_cast<unsigned long long>(back->iteration));
        return digested_;
    }

    // The one point where this rank waits for its tile row.
    void save(rampart::store::checkpoints& cp, std::size_t ti) {
        digest_rows_up_to(ti + 1);
        saved_state st;
        for (std::size_t k = 0; k < local_; ++k) st.bottoms.push_back(grid_[ti][k].get().bottom);
        st.digests = digests_;
        st.best = best_.score;
        st.best_row = best_.row;
        st.best_col = best_.col;
        cp.save(ti, st);
    }

    static shared_future<tile_edges> ready(tile_edges e) { return make_ready_future(std::move(e)).share(); }

    // A tile needs the one above and the one to its left (or the left
    // neighbour rank's column).
    void tile_row(std::size_t ti, std::size_t start) {
        shared_future<tile_edges> left;
        if (me_ > 0) {
            left = comm::irecv<std::vector<std::int32_t>>(me_ - 1, tag_edge)
                       .then([](future<std::vector<std::int32_t>> f) {
                           tile_edges e;
                           e.right = f.get();
                           return e;
                       })
                       .share();
        } else {
            tile_edges e;
            e.right.assign(rows_of(ti) + 1, 0);
            left = ready(std::move(e));
        }
        for (std::size_t k = 0; k < local_; ++k) {
            shared_future<tile_edges> top;
            if (ti > 0 && ti == start) {
                tile_edges e;
                e.bottom = restored_tops_[k];
                top = ready(std::move(e));
            } else if (ti > 0) {
                top = grid_[ti - 1][k];
            } else {
                tile_edges e;
                e.bottom.assign(cols_of(lo_ + k), 0);
                top = ready(std::move(e));
            }
            grid_[ti][k] = tile_task(ti, k, top, left);
            left = grid_[ti][k];
        }
    }

    shared_future<tile_edges> tile_task(std::size_t ti, std::size_t k, const shared_future<tile_edges>& top,
                                        const shared_future<tile_edges>& left) {
        const std::size_t tj = lo_ + k, r0 = ti * T_, r1 = r0 + rows_of(ti), c0 = tj * T_, c1 = c0 + cols_of(tj);
        const std::uint64_t key = ti * cols_ + tj;
        const bool sends = me_ + 1 < ranks_ && k + 1 == local_, reports = c_.distributed && k == 0;
        const bool faults = c_.error_rate > 0;
        auto body = [this, faults, key, r0, r1, c0, c1, sends, reports, ti](const auto& top, const auto& left) {
            if (reports) recovery::report_iteration(ti);
            if (faults && c_.kind == variant::replay) inject_.maybe_throw(key);
            tile_edges t = score_tile(a_, b_, r0, r1, c0, c1, top.get().bottom, left.get().right);
            if (faults && c_.kind != variant::replay) inject_.maybe_flip_bit(t.bottom, key);  // silent corruption
            // In a resilient task this leaves only once the tile is accepted.
            if (sends) comm::isend(me_ + 1, tag_edge, t.right);
            return t;
        };
        switch (c_.kind) {
            case variant::baseline:
                return dataflow(body, top, left).share();
            case variant::replay:
                return dataflow_replay(c_.replays, body, top, left).share();
            case variant::replicate:
                return dataflow_replicate_replay(3, c_.replays, majority_vote{}, body, top, left).share();
        }
        throw rampart::invalid_argument("smith-waterman: unknown variant");
    }

    // The checksum covers the digests of all tiles in row-major tile order,
    // whatever the number of ranks: rank 0 gathers them with the others'
    // best cells and counters.
    void gather(result& res) {
        std::vector<std::uint64_t> all(rows_ * cols_);
        auto place = [&](std::size_t first, std::size_t count, const std::vector<std::uint64_t>& d) {
            for (std::size_t ti = 0; ti < rows_; ++ti)
                for (std::size_t k = 0; k < count; ++k) all[ti * cols_ + first + k] = d[ti * count + k];
        };
        place(lo_, local_, digests_);
        if (ranks_ > 1 && !gather_from_ranks(res, place)) return;
        res.checksum = apps::hex64(XXH3_64bits(all.data(), all.size() * sizeof(std::uint64_t)));
    }

    // False on the ranks that send (only rank 0 has the whole result).
    template <class Place>
    bool gather_from_ranks(result& res, Place& place) {
        std::array<std::uint64_t, 4 + counters::field_count> summary{static_cast<std::uint64_t>(best_.score), best_.row,
                                                                     best_.col, res.faults_injected};
        const auto s = res.stats.to_array();
        std::copy(s.begin(), s.end(), summary.begin() + 4);
        if (me_ != 0) {
            comm::isend(0, tag_digests, digests_).get();
            comm::isend(0, tag_summary, summary).get();
            return false;
        }
        for (int r = 1; r < ranks_; ++r) {
            const std::size_t rlo = first_of(r), count = first_of(r + 1) - rlo;
            auto d = comm::irecv<std::vector<std::uint64_t>>(r, tag_digests).get();
            if (d.size() != rows_ * count)
                throw rampart::invalid_argument("smith-waterman: rank " + std::to_string(r) + " sent " +
                                                std::to_string(d.size()) + " tile digests");
            place(rlo, count, d);
            auto theirs = comm::irecv<decltype(summary)>(r, tag_summary).get();
            const auto score = static_cast<std::int32_t>(theirs[0]);
            const auto row = static_cast<std::uint32_t>(theirs[1]), col = static_cast<std::uint32_t>(theirs[2]);
            if (better(score, row, col, res.end)) res.end = {score, row, col};
            res.faults_injected += theirs[3];
            std::array<std::uint64_t, counters::field_count> st{};
            std::copy(theirs.begin() + 4, theirs.end(), st.begin());
            res.stats = res.stats + counters::from_array(st);
        }
        return true;
    }

    const config& c_;
    const std::string a_, b_;
    const std::size_t T_, rows_, cols_;
    const int ranks_, me_;
    std::size_t lo_ = 0, local_ = 0;
    fault_injector inject_;
    // grid_[ti][k]: tile (ti, lo_ + k).
    std::vector<std::vector<shared_future<tile_edges>>> grid_;
    std::vector<std::uint64_t> digests_;
    alignment_end best_;
    std::size_t digested_ = 0;
    std::vector<std::vector<std::int32_t>> restored_tops_;
};

}  // namespace

result run(const config& c) {
    if (c.length_a < 1 || c.length_b < 1)
        throw rampart::invalid_argument("smith-waterman: sequences must not be empty");
    if (c.tile < 1) throw rampart::invalid_argument("smith-waterman: tiles need at least one row and column");
    if (c.replays < 1) throw rampart::invalid_argument("smith-waterman: replays must be at least 1");
    return wavefront(c).run();
}

}  // namespace rampart::smith_waterman
