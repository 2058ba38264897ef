#pragma once
// Where the copies of a block live (the restore paper, IV-A and IV-B).
//
// Blocks have global ids 0..n-1. Consecutive ids are grouped into ranges of
// `range_blocks` blocks; a seeded permutation of the range ids spreads them
// over the PEs, so that the data of one failed PE is served by many PEs.
// Without permutation (range_blocks == 0) ids keep their order and the ids of
// one PE's data stay together. Copy k of a block lives on PE
// (first + k*p/r) mod p, so the r copies are p/r PEs apart; with r | p the
// PEs form p/r groups of r that hold the same data. "p/r PEs apart" counts
// along a node_order, the PEs sorted by node, so that the r copies lie on r
// different nodes when no node has more than p/r PEs; copy 0 stays where the
// ids put it (a PE's own data, without permutation). Every process computes
// the same placement from (n, p, r, range_blocks, seed, nodes): no
// communication.
//
//     rampart::store::placement where(1 << 20, 4, 4, 4096, 7);
//     int pe = where.holder(123456, 2);  // the PE with copy 2 of block 123456

#include <cstdint>
#include <memory>
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

/// The PEs in the order the copies are spread along: sorted by node, PEs of
/// one node in their own order. Copies share it (it is computed once).
///
///     rampart::store::node_order order({0, 1, 0, 1});  // PEs 0, 2 on node 0; 1, 3 on node 1
///     int pe = order.pe_at(1);                          // 2
class node_order {
public:
    /// Every PE in its own place (the nodes unknown, or one PE each).
    node_order() = default;
    /// node_of_pe[q]: the node of PE q (any numbers). Throws
    /// std::invalid_argument when empty.
    explicit node_order(const std::vector<int>& node_of_pe);

    int pe_at(int position) const { return at_ ? (*at_)[static_cast<std::size_t>(position)] : position; }
    int position_of(int pe) const { return of_ ? (*of_)[static_cast<std::size_t>(pe)] : pe; }
    /// The PEs ordered (0 without an order: any number of PEs in their own order).
    int pes() const noexcept { return at_ ? static_cast<int>(at_->size()) : 0; }

private:
    std::shared_ptr<const std::vector<int>> at_, of_;  // null: PE order itself
};

class placement {
public:
    /// n blocks over p PEs with r copies each; range_blocks consecutive ids
    /// per permutation range, 0 for no permutation; copies p/r PEs apart
    /// along `order`. Throws std::invalid_argument unless 1 <= r <= p,
    /// n >= 1 and `order` orders p PEs (or none).
    placement(std::uint64_t blocks, int pes, int replicas, std::uint64_t range_blocks, std::uint64_t seed,
              node_order order = {});

    std::uint64_t blocks() const noexcept { return n_; }
    int pes() const noexcept { return p_; }
    int replicas() const noexcept { return r_; }

    /// The PE of copy 0 of a block.
    int first_holder(std::uint64_t id) const;
    /// The PE of copy k (0 <= k < r) of the block whose copy 0 is on `first`.
    int holder_of_copy(int first, int k) const {
        return order_.pe_at(static_cast<int>(
            (static_cast<std::uint64_t>(order_.position_of(first)) +
             static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(p_) / static_cast<std::uint64_t>(r_)) %
            static_cast<std::uint64_t>(p_)));
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
    node_order order_;
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
