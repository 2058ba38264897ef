#pragma once
// Smith-Waterman local sequence alignment on a wavefront of tiles, the second
// benchmark of the amt-resilience-with-mpi-communication paper. Two sequences
// (A down, B across) are generated from a seed; the score matrix is cut into
// tiles, each a task that needs the bottom row of the tile above and the right
// column of the tile to its left. Distributed, each rank owns a contiguous band
// of tile columns and sends the right column of its last tile of every tile
// row to its right neighbour.

#include <rampart/task/counters.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rampart::smith_waterman {

/// Linear gap scoring.
constexpr std::int32_t match_score = 2, mismatch_score = -3, gap_score = -5;

/// What a tile passes on, and its best cell.
struct tile_edges {
    std::vector<std::int32_t> bottom;          ///< its last row
    std::vector<std::int32_t> right;           ///< the cell above-right of it, then its last column
    std::int32_t best = 0;                     ///< highest score in the tile, first in row-major order
    std::uint32_t best_row = 0, best_col = 0;  ///< global position of `best`

    /// Bitwise equality, as a vote needs.
    friend bool operator==(const tile_edges&, const tile_edges&) = default;
};

/// The highest score, and where: ties go to the smallest (row, column).
struct alignment_end {
    std::int32_t score = 0;
    std::uint32_t row = 0, col = 0;
};

/// The sequence of `length` letters ACGT made from `seed`.
std::string make_sequence(std::size_t length, std::uint64_t seed);

/// Scores rows [r0, r1) x columns [c0, c1) of the matrix. `top` holds the
/// c1-c0 cells above the tile; `left` the cell above-left, then the r1-r0
/// cells to the left. Throws rampart::invalid_argument on wrong sizes.
tile_edges score_tile(const std::string& a, const std::string& b, std::size_t r0, std::size_t r1, std::size_t c0,
                      std::size_t c1, const std::vector<std::int32_t>& top, const std::vector<std::int32_t>& left);

/// Scores the whole matrix in one pass, without tiles: the reference.
alignment_end score_whole(const std::string& a, const std::string& b);

enum class variant { baseline, replay, replicate };

struct config {
    variant kind = variant::baseline;
    std::size_t length_a = 16384, length_b = 16384;
    std::size_t tile = 256;  ///< rows and columns per tile
    double error_rate = 0.0;
    std::uint64_t input_seed = 1;  ///< of the sequences
    std::uint64_t seed = 1;        ///< of the faults
    std::size_t replays = 5;
    bool distributed = false;
    std::size_t checkpoint_every = 0;  ///< tile rows between checkpoints in the store (0: none; distributed only)
};

struct result {
    alignment_end end;
    std::string checksum;  ///< hex XXH3-64 over the digests of every tile's edges, in tile order
    double seconds = 0;
    std::uint64_t faults_injected = 0;
    counters stats;
};

variant parse_variant(const std::string& name);
std::string to_string(variant v);
std::string fault_kind(variant v);  ///< "exception" for replay, "bitflip" otherwise

/// Runs the alignment; needs a live rampart::runtime. Distributed, rank 0's
/// result holds the end, the checksum and the counters summed over ranks.
result run(const config& c);

}  // namespace rampart::smith_waterman
