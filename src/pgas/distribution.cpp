// How an array is cut into blocks (see rampart/pgas/distribution.hpp).

#include <rampart/pgas/distribution.hpp>
#include <rampart/task/errors.hpp>

#include <algorithm>
#include <cmath>

namespace rampart::pgas {

namespace {

[[noreturn]] void refuse(const std::string& why) { throw rampart::invalid_argument("rampart::pgas: " + why); }

// Far beyond any one node's memory, and small enough that element and byte
// offsets never overflow.
constexpr std::int64_t max_elements = std::int64_t{1} << 46;

std::array<std::int64_t, 2> checked_extents(const std::vector<std::int64_t>& extents) {
    if (extents.size() != 1 && extents.size() != 2)
        refuse("an array has 1 or 2 dimensions, not " + std::to_string(extents.size()));
    for (auto e : extents)
        if (e < 1) refuse("an extent of " + std::to_string(e) + " (each must be at least 1)");
    const std::array<std::int64_t, 2> ext{extents[0], extents.size() == 2 ? extents[1] : 1};
    if (ext[0] > max_elements / ext[1]) refuse("an array of more than 2^46 elements");
    return ext;
}

// Boundaries that cut n into `parts` pieces of sizes differing by at most one.
std::vector<std::int64_t> even_starts(std::int64_t n, std::int64_t parts) {
    parts = std::clamp<std::int64_t>(parts, 1, n);
    std::vector<std::int64_t> s;
    for (std::int64_t k = 0; k < parts; ++k) s.push_back(k * (n / parts) + std::min(k, n % parts));
    return s;
}

}  // namespace

// Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly) about "[" + std::string.
std::string patch::text() const {
    std::string s(1, '[');
    for (int d = 0; d < 2; ++d) {
        if (d) s += ", ";
        s += std::to_string(lo[d]);
        s += ':';
        s += std::to_string(hi[d]);
    }
    s += ')';
    return s;
}

patch intersect(const patch& a, const patch& b) {
    patch r;
    for (int d = 0; d < 2; ++d) {
        r.lo[d] = std::max(a.lo[d], b.lo[d]);
        r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
    }
    return r;
}

distribution::distribution(int dims, std::array<std::int64_t, 2> extents,
                           std::array<std::vector<std::int64_t>, 2> starts)
    : dims_(dims), extents_(extents), starts_(std::move(starts)) {}

void distribution::check_ranks(std::size_t blocks, int ranks) {
    if (ranks < 1) refuse("a distribution over " + std::to_string(ranks) + " ranks");
    if (blocks > static_cast<std::size_t>(ranks))
        refuse(std::to_string(blocks) + " blocks for " + std::to_string(ranks) +
               " ranks (each rank holds at most one block)");
}

distribution distribution::even(const std::vector<std::int64_t>& extents, int ranks) {
    const auto ext = checked_extents(extents);
    check_ranks(1, ranks);
    if (extents.size() == 1) return {1, ext, {even_starts(ext[0], ranks), {0}}};
    // The grid rows x cols with the most blocks (at most `ranks`, each side
    // at most its extent), and among those the most square blocks.
    std::int64_t rows = 1, cols = 1;
    double best = -1;
    for (std::int64_t c = 1; c <= std::min<std::int64_t>(ranks, ext[1]); ++c) {
        const std::int64_t r = std::min<std::int64_t>(ranks / c, ext[0]);
        const double squareness = -std::abs(static_cast<double>(ext[0]) / static_cast<double>(r) -
                                            static_cast<double>(ext[1]) / static_cast<double>(c));
        if (r * c > rows * cols || (r * c == rows * cols && squareness > best)) {
            rows = r;
            cols = c;
            best = squareness;
        }
    }
    return {2, ext, {even_starts(ext[0], rows), even_starts(ext[1], cols)}};
}

distribution distribution::blocked(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& block,
                                   int ranks) {
    const auto ext = checked_extents(extents);
    if (block.size() != extents.size())
        refuse("a block size for each of the " + std::to_string(extents.size()) + " dimensions, got " +
               std::to_string(block.size()));
    std::array<std::vector<std::int64_t>, 2> starts{std::vector<std::int64_t>{0}, std::vector<std::int64_t>{0}};
    std::size_t count = 1;  // blocks in the grid, checked before the boundaries are made
    for (std::size_t d = 0; d < block.size(); ++d) {
        if (block[d] < 1) refuse("a block size of " + std::to_string(block[d]) + " (each must be at least 1)");
        count *= static_cast<std::size_t>((ext[d] + block[d] - 1) / block[d]);
        check_ranks(count, ranks);
    }
    for (std::size_t d = 0; d < block.size(); ++d) {
        starts[d].clear();
        for (std::int64_t s = 0; s < ext[d]; s += block[d]) starts[d].push_back(s);
    }
    return {static_cast<int>(extents.size()), ext, std::move(starts)};
}

distribution distribution::irregular(const std::vector<std::int64_t>& extents,
                                     const std::vector<std::vector<std::int64_t>>& starts, int ranks) {
    const auto ext = checked_extents(extents);
    if (starts.size() != extents.size())
        refuse("block boundaries for each of the " + std::to_string(extents.size()) + " dimensions, got " +
               std::to_string(starts.size()));
    std::array<std::vector<std::int64_t>, 2> s{std::vector<std::int64_t>{0}, std::vector<std::int64_t>{0}};
    for (std::size_t d = 0; d < starts.size(); ++d) {
        const auto& v = starts[d];
        if (v.empty() || v.front() != 0) refuse("the block boundaries of a dimension must begin with 0");
        for (std::size_t k = 1; k < v.size(); ++k)
            if (v[k] <= v[k - 1]) refuse("block boundaries must increase strictly");
        if (v.back() >= ext[d]) refuse("a block boundary at " + std::to_string(v.back()) + " is past the extent");
        s[d] = v;
    }
    check_ranks(s[0].size() * s[1].size(), ranks);
    return {static_cast<int>(extents.size()), ext, std::move(s)};
}

int distribution::index_in(int d, std::int64_t i) const {
    const auto& s = starts_[static_cast<std::size_t>(d)];
    return static_cast<int>(std::upper_bound(s.begin(), s.end(), i) - s.begin()) - 1;
}

int distribution::block_of(std::array<std::int64_t, 2> index) const {
    return index_in(0, index[0]) * block_cols() + index_in(1, index[1]);
}

patch distribution::block_patch(int block) const {
    const auto r = static_cast<std::size_t>(block / block_cols()), c = static_cast<std::size_t>(block % block_cols());
    auto end = [&](std::size_t d, std::size_t k) {
        return k + 1 < starts_[d].size() ? starts_[d][k + 1] : extents_[d];
    };
    return {{starts_[0][r], starts_[1][c]}, {end(0, r), end(1, c)}};
}

std::vector<int> distribution::blocks_of(const patch& p) const {
    std::vector<int> out;
    if (p.empty()) return out;
    const int r0 = index_in(0, p.lo[0]), r1 = index_in(0, p.hi[0] - 1);
    const int c0 = index_in(1, p.lo[1]), c1 = index_in(1, p.hi[1] - 1);
    for (int r = r0; r <= r1; ++r)
        for (int c = c0; c <= c1; ++c) out.push_back(r * block_cols() + c);
    return out;
}

std::string distribution::check(const patch& p) const {
    for (int d = 0; d < 2; ++d) {
        if (p.lo[d] < 0 || p.hi[d] > extents_[d] || p.lo[d] >= p.hi[d])
            return "patch " + p.text() + " is not a non-empty patch inside the array " + whole().text();
    }
    return "";
}

}  // namespace rampart::pgas
