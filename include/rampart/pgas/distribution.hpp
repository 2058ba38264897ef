#pragma once
// The shape of a distributed array and how it is cut into blocks, one block
// per rank at most, as Global Arrays does: the rows (and columns) are split
// at given boundaries, and the blocks of the grid go to the ranks in
// row-major order. Every process computes the same blocks from the same
// arguments: no communication.
//
//     auto d = rampart::pgas::distribution::even({1000, 800}, 4);   // a 2 x 2 grid of blocks
//     auto b = d.block_of({999, 0});                                // block 2 (rows 500.., cols 0..)
//     rampart::pgas::patch p = d.block_patch(b);                    // {{500, 0}, {1000, 400}}

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rampart::pgas {

/// A rectangle of global indices, [lo, hi) in each dimension (Global
/// Arrays' lo and hi are inclusive: its hi is this hi - 1). A 1-D array's
/// patches have lo[1] = 0 and hi[1] = 1.
///
///     rampart::pgas::patch rows = rampart::pgas::patch::range(10, 20);        // 1-D: elements 10..19
///     rampart::pgas::patch tile{{0, 0}, {64, 64}};                            // 2-D
struct patch {
    std::array<std::int64_t, 2> lo{0, 0};
    std::array<std::int64_t, 2> hi{0, 1};

    /// The 1-D patch [first, end).
    static patch range(std::int64_t first, std::int64_t end) { return {{first, 0}, {end, 1}}; }
    /// One element.
    static patch element(std::int64_t i, std::int64_t j = 0) { return {{i, j}, {i + 1, j + 1}}; }
    std::int64_t rows() const noexcept { return hi[0] - lo[0]; }
    std::int64_t cols() const noexcept { return hi[1] - lo[1]; }
    std::int64_t elements() const noexcept { return rows() * cols(); }
    bool empty() const noexcept { return rows() <= 0 || cols() <= 0; }
    /// "[10:20, 0:64)" style, for messages.
    std::string text() const;
    friend bool operator==(const patch&, const patch&) = default;
};

/// The intersection of two patches (empty when they do not overlap).
patch intersect(const patch& a, const patch& b);

class distribution {
public:
    /// An array of `extents` (1 or 2 of them) cut as evenly as possible for
    /// `ranks` ranks: rows for 1-D; for 2-D a grid of blocks as square as the
    /// rank count allows (rows x cols, rows >= cols). Throws
    /// rampart::invalid_argument for extents below 1 or not 1 or 2 of them.
    static distribution even(const std::vector<std::int64_t>& extents, int ranks);
    /// Blocks of at least `block` elements per dimension (Global Arrays'
    /// chunk): the last block of a dimension may be smaller. The grid must
    /// have at most `ranks` blocks.
    static distribution blocked(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& block,
                                int ranks);
    /// Explicit boundaries (Global Arrays' irregular map): `starts[d]` lists
    /// the first index of each block of dimension d, beginning with 0,
    /// strictly increasing, below the extent. At most `ranks` blocks.
    static distribution irregular(const std::vector<std::int64_t>& extents,
                                  const std::vector<std::vector<std::int64_t>>& starts, int ranks);

    int dimensions() const noexcept { return dims_; }
    std::int64_t extent(int d) const { return extents_.at(static_cast<std::size_t>(d)); }
    /// The whole array as a patch.
    patch whole() const noexcept { return {{0, 0}, {extents_[0], extents_[1]}}; }
    /// Blocks in the grid; block b belongs to rank b at creation.
    int blocks() const noexcept { return static_cast<int>(starts_[0].size() * starts_[1].size()); }
    int block_rows() const noexcept { return static_cast<int>(starts_[0].size()); }
    int block_cols() const noexcept { return static_cast<int>(starts_[1].size()); }
    /// The block holding element (i, j); the element must be inside.
    int block_of(std::array<std::int64_t, 2> index) const;
    patch block_patch(int block) const;
    /// The blocks a patch touches, in row-major order.
    std::vector<int> blocks_of(const patch& p) const;
    /// "" when `p` is a non-empty patch inside the array (for 1-D: its
    /// columns are [0, 1)); otherwise why not.
    std::string check(const patch& p) const;
    friend bool operator==(const distribution&, const distribution&) = default;

private:
    distribution(int dims, std::array<std::int64_t, 2> extents, std::array<std::vector<std::int64_t>, 2> starts);
    static void check_ranks(std::size_t blocks, int ranks);
    int index_in(int d, std::int64_t i) const;

    int dims_ = 1;
    std::array<std::int64_t, 2> extents_{0, 1};
    std::array<std::vector<std::int64_t>, 2> starts_;
};

}  // namespace rampart::pgas
