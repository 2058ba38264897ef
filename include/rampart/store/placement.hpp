#pragma once
// Where the copies of a block live (the restore paper, IV-A and IV-B).
//
// Blocks have global ids 0..n-1. Consecutive ids are grouped into ranges of
// `range_blocks` blocks; a seeded permutation of the range ids spreads them
// over the PEs, so that the data of one failed PE is served by many PEs.
// Without permutation (range_blocks == 0) ids keep their order and the ids of
// one PE's data stay together. Copy k of a block lives on PE
// (first + k*p/r) mod p, so the r copies are p/r PEs apart; with r | p the
// PEs form p/r groups of r that hold the same data. Every process computes
// the same placement from (n, p, r, range_blocks, seed): no communication.
//
//     rampart::store::placement where(1 << 20, 4, 4, 4096, 7);
//     int pe = where.holder(123456, 2);  // the PE with copy 2 of block 123456

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rampart::store {

/// A seeded pseudorandom permutation of [0, n): a 4-round Feistel network on
/// the smallest power of four >= n, with cycle walking. O(1) memory, same
/// result on every process.
class permutation {
public:
    permutation(std::uint64_t n, std::uint64_t seed);
    std::uint64_t operator()(std::uint64_t x) const;
    std::uint64_t inverse(std::uint64_t y) const;
    std::uint64_t size() const noexcept { return n_; }

private:
    std::uint64_t round(std::uint64_t half, int i) const;
    std::uint64_t encrypt(std::uint64_t x) const;
    std::uint64_t decrypt(std::uint64_t y) const;
    std::uint64_t n_;
    int half_bits_ = 0;
    std::uint64_t half_mask_ = 0;
    std::uint64_t keys_[4]{};
};

/// A run of consecutive block ids that have the same holders.
struct placement_unit {
    std::uint64_t first_id = 0;
    std::uint64_t count = 0;
    int first_holder = 0;  ///< the PE of copy 0
};

class placement {
public:
    /// n blocks over p PEs with r copies each; range_blocks consecutive ids
    /// per permutation range, 0 for no permutation. Throws
    /// std::invalid_argument unless 1 <= r <= p and n >= 1.
    placement(std::uint64_t blocks, int pes, int replicas, std::uint64_t range_blocks, std::uint64_t seed);

    std::uint64_t blocks() const noexcept { return n_; }
    int pes() const noexcept { return p_; }
    int replicas() const noexcept { return r_; }

    /// The PE of copy 0 of a block.
    int first_holder(std::uint64_t id) const;
    /// The PE of copy k (0 <= k < r) of the block whose copy 0 is on `first`.
    int holder_of_copy(int first, int k) const {
        return static_cast<int>(
            (static_cast<std::uint64_t>(first) +
             static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(p_) / static_cast<std::uint64_t>(r_)) %
            static_cast<std::uint64_t>(p_));
    }
    int holder(std::uint64_t id, int k) const { return holder_of_copy(first_holder(id), k); }

    /// The unit that contains `id`: the longest run of ids around it with the
    /// same holders that does not cross a permutation range.
    placement_unit unit_of(std::uint64_t id) const;
    /// [first, first + count) cut into units, in id order.
    std::vector<placement_unit> units(std::uint64_t first, std::uint64_t count) const;

private:
    std::uint64_t n_;
    int p_, r_;
    std::uint64_t range_blocks_;
    std::uint64_t ranges_ = 0;
    permutation perm_;
};

/// Probability of irrecoverable data loss after f uniform PE failures, with
/// p PEs in p/r groups of r (r must divide p): the restore paper's IV-D,
///   P(loss) = sum_{j>=1} (-1)^(j+1) C(p/r, j) C(p - j r, f - j r) / C(p, f).
/// Evaluated in quad precision (__float128, or a 128-bit long double):
/// absolute error below ~1e-16 for any p, relative error ~1e-19 where the
/// probability is small; only ~1e-8 near 1 where neither exists. Throws
/// std::invalid_argument unless r divides p and 0 <= f <= p.
long double probability_of_data_loss(int p, int r, int f);

}  // namespace rampart::store
