#include "smith_waterman.hpp"

#include <rampart/recovery/recovery.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

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
                                        std::to_string(top.size()) + " cells above and " +
                                        std::to_string(left.size()) + " to the left");
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
        case variant::baseline: return "baseline";
        case variant::replay: return "replay";
        case variant::replicate: return "replicate";
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

result run(const config& c) {
    if (c.length_a < 1 || c.length_b < 1) throw rampart::invalid_argument("smith-waterman: sequences must not be empty");
    if (c.tile < 1) throw rampart::invalid_argument("smith-waterman: tiles need at least one row and column");
    if (c.replays < 1) throw rampart::invalid_argument("smith-waterman: replays must be at least 1");
    const std::string a = make_sequence(c.length_a, c.input_seed), b = make_sequence(c.length_b, c.input_seed + 1);
    const std::size_t T = c.tile;
    const std::size_t rows = (c.length_a + T - 1) / T, cols = (c.length_b + T - 1) / T;
    const int ranks = c.distributed ? comm::size() : 1;
    const int me = c.distributed ? comm::rank() : 0;
    if (static_cast<std::size_t>(ranks) > cols)
        throw rampart::invalid_argument("smith-waterman: more ranks (" + std::to_string(ranks) + ") than tile columns (" +
                                        std::to_string(cols) + ")");
    // This rank owns tile columns [lo, hi).
    const std::size_t lo = cols * static_cast<std::size_t>(me) / static_cast<std::size_t>(ranks);
    const std::size_t hi = cols * static_cast<std::size_t>(me + 1) / static_cast<std::size_t>(ranks);
    const std::size_t local = hi - lo;
    const bool from_left = me > 0, to_right = me + 1 < ranks;
    auto rows_of = [&](std::size_t ti) { return std::min(T, c.length_a - ti * T); };
    auto cols_of = [&](std::size_t tj) { return std::min(T, c.length_b - tj * T); };

    fault_injector inject(c.error_rate, c.seed);
    const bool faults = c.error_rate > 0;
    const counters before = read_counters();
    const auto t0 = std::chrono::steady_clock::now();

    // grid[ti][k]: tile (ti, lo + k). A tile needs the one above and the one
    // to its left (or the left neighbour rank's column).
    std::vector<std::vector<shared_future<tile_edges>>> grid(rows, std::vector<shared_future<tile_edges>>(local));
    // Digests and the best cell of the tile rows done: rows [0, digested).
    std::vector<std::uint64_t> digests;
    digests.reserve(rows * local);
    alignment_end best;
    std::size_t digested = 0;
    auto digest_rows_up_to = [&](std::size_t end) {
        for (; digested < end; ++digested)
            for (std::size_t k = 0; k < local; ++k) {
                const tile_edges& t = grid[digested][k].get();
                digests.push_back(digest(t));
                if (better(t.best, t.best_row, t.best_col, best)) best = {t.best, t.best_row, t.best_col};
            }
    };
    // Checkpoints: a replacement resumes after the newest one.
    std::optional<rampart::store::checkpoints> cp;
    std::size_t start = 0;
    std::vector<std::vector<std::int32_t>> restored_tops;
    if (c.distributed && ranks > 1 && c.checkpoint_every > 0) {
        cp.emplace(local * (T * sizeof(std::int32_t) + 16) + rows * local * sizeof(std::uint64_t) + 64);
        if (auto back = cp->restore<saved_state>()) {
            start = static_cast<std::size_t>(back->iteration) + 1;
            restored_tops = std::move(back->state.bottoms);
            digests = std::move(back->state.digests);
            best = {back->state.best, back->state.best_row, back->state.best_col};
            digested = start;
            std::fprintf(stderr, "rampart-smith-waterman: rank %d resumes after iteration %zu (tile row) from a checkpoint\n", me,
                         start - 1);
        }
    }
    for (std::size_t ti = start; ti < rows; ++ti) {
        const std::size_t r0 = ti * T, r1 = r0 + rows_of(ti);
        shared_future<tile_edges> left;
        if (from_left) {
            left = comm::irecv<std::vector<std::int32_t>>(me - 1, tag_edge)
                       .then([](future<std::vector<std::int32_t>> f) {
                           tile_edges e;
                           e.right = f.get();
                           return e;
                       })
                       .share();
        } else {
            tile_edges e;
            e.right.assign(r1 - r0 + 1, 0);
            left = make_ready_future(std::move(e)).share();
        }
        for (std::size_t k = 0; k < local; ++k) {
            const std::size_t tj = lo + k, c0 = tj * T, c1 = c0 + cols_of(tj);
            shared_future<tile_edges> top;
            if (ti > 0 && ti == start) {
                tile_edges e;
                e.bottom = restored_tops[k];
                top = make_ready_future(std::move(e)).share();
            } else if (ti > 0) {
                top = grid[ti - 1][k];
            } else {
                tile_edges e;
                e.bottom.assign(c1 - c0, 0);
                top = make_ready_future(std::move(e)).share();
            }
            const std::uint64_t key = ti * cols + tj;
            const bool sends = to_right && k + 1 == local;
            const bool reports = c.distributed && k == 0;
            auto body = [&a, &b, &inject, faults, key, r0, r1, c0, c1, sends, reports, me, ti,
                         kind = c.kind](const auto& top, const auto& left) {
                if (reports) recovery::report_iteration(ti);
                if (faults && kind == variant::replay) inject.maybe_throw(key);
                tile_edges t = score_tile(a, b, r0, r1, c0, c1, top.get().bottom, left.get().right);
                if (faults && kind != variant::replay) inject.maybe_flip_bit(t.bottom, key);  // silent corruption
                // In a resilient task this leaves only once the tile is accepted.
                if (sends) comm::isend(me + 1, tag_edge, t.right);
                return t;
            };
            switch (c.kind) {
                case variant::baseline:
                    grid[ti][k] = dataflow(body, top, left).share();
                    break;
                case variant::replay:
                    grid[ti][k] = dataflow_replay(c.replays, body, top, left).share();
                    break;
                case variant::replicate:
                    grid[ti][k] = dataflow_replicate_replay(3, c.replays, majority_vote{}, body, top, left).share();
                    break;
            }
            left = grid[ti][k];
        }
        if (cp && ti + 1 < rows && (ti + 1) % c.checkpoint_every == 0) {
            // The one point where this rank waits for its tile row.
            digest_rows_up_to(ti + 1);
            saved_state st;
            for (std::size_t k = 0; k < local; ++k) st.bottoms.push_back(grid[ti][k].get().bottom);
            st.digests = digests;
            st.best = best.score;
            st.best_row = best.row;
            st.best_col = best.col;
            cp->save(ti, st);
        }
    }
    digest_rows_up_to(rows);
    const auto t1 = std::chrono::steady_clock::now();

    result res;
    res.seconds = std::chrono::duration<double>(t1 - t0).count();
    res.faults_injected = inject.injected();
    res.stats = read_counters() - before;
    res.end = best;
    // The checksum covers the digests of all tiles in row-major tile order,
    // whatever the number of ranks.
    std::vector<std::uint64_t> all(rows * cols);
    auto place = [&](std::size_t first, std::size_t count, const std::vector<std::uint64_t>& d) {
        for (std::size_t ti = 0; ti < rows; ++ti)
            for (std::size_t k = 0; k < count; ++k) all[ti * cols + first + k] = d[ti * count + k];
    };
    if (ranks > 1) {
        std::array<std::uint64_t, 4 + counters::field_count> summary{};
        summary[0] = static_cast<std::uint64_t>(best.score);
        summary[1] = best.row;
        summary[2] = best.col;
        summary[3] = res.faults_injected;
        const auto s = res.stats.to_array();
        std::copy(s.begin(), s.end(), summary.begin() + 4);
        if (me != 0) {
            comm::isend(0, tag_digests, digests).get();
            comm::isend(0, tag_summary, summary).get();
            return res;
        }
        place(lo, local, digests);
        for (int r = 1; r < ranks; ++r) {
            const std::size_t rlo = cols * static_cast<std::size_t>(r) / static_cast<std::size_t>(ranks);
            const std::size_t rhi = cols * static_cast<std::size_t>(r + 1) / static_cast<std::size_t>(ranks);
            auto d = comm::irecv<std::vector<std::uint64_t>>(r, tag_digests).get();
            if (d.size() != rows * (rhi - rlo))
                throw rampart::invalid_argument("smith-waterman: rank " + std::to_string(r) + " sent " +
                                                std::to_string(d.size()) + " tile digests");
            place(rlo, rhi - rlo, d);
            auto theirs = comm::irecv<decltype(summary)>(r, tag_summary).get();
            const auto score = static_cast<std::int32_t>(theirs[0]);
            const auto row = static_cast<std::uint32_t>(theirs[1]), col = static_cast<std::uint32_t>(theirs[2]);
            if (better(score, row, col, res.end)) res.end = {score, row, col};
            res.faults_injected += theirs[3];
            std::array<std::uint64_t, counters::field_count> st{};
            std::copy(theirs.begin() + 4, theirs.end(), st.begin());
            res.stats = res.stats + counters::from_array(st);
        }
    } else {
        place(0, cols, digests);
    }
    res.checksum = apps::hex64(XXH3_64bits(all.data(), all.size() * sizeof(std::uint64_t)));
    return res;
}

}  // namespace rampart::smith_waterman
