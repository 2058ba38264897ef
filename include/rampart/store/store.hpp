#pragma once
// The replicated in-memory store (rampart::store), after the restore paper:
// data cut into blocks with global ids, r copies spread over the ranks, so
// that what a failed rank held is loaded again in milliseconds from the
// survivors. Shrinking recovery: the survivors load the dead rank's blocks
// among themselves.
//
//     rampart::store::store s(sizeof(double) * 8);          // blocks of 8 doubles
//     s.submit(first_id, std::as_bytes(std::span(my_data)), total_blocks);
//     ...                                                    // a rank dies
//     std::vector<char> back = s.load({{dead_first, dead_count}});

#include <rampart/store/placement.hpp>
#include <rampart/task/errors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace rampart::store {

/// Blocks [first, first + count).
struct id_range {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
};

/// Blocks [first_id, first_id + bytes.size() / block_bytes) as contiguous bytes.
struct block_run {
    std::uint64_t first_id = 0;
    std::span<const std::byte> bytes;
};

struct options {
    int replicas = 0;                         ///< copies of each block; 0 means min(4, ranks)
    std::size_t permutation_range_bytes = 0;  ///< bytes per permutation range; 0: no permutation
    std::uint64_t seed = 0;                   ///< of the permutation and of the choice of copies
};

/// A store operation could not do what was asked: blocks whose copies are
/// all lost (listed in lost()), a submit left incomplete by ranks that
/// failed, or submissions that do not fit together (a program error:
/// by_failures() is false).
class store_error : public rampart::error {
public:
    store_error(const std::string& what, std::vector<id_range> lost = {}, bool by_failures = true)
        : rampart::error(what), lost_(std::move(lost)), by_failures_(by_failures) {}
    /// The blocks that no surviving rank holds, merged into ranges.
    const std::vector<id_range>& lost() const noexcept { return lost_; }
    /// Whether failures of ranks caused it; false when the ranks' parts of
    /// a submit do not fit together whoever failed.
    bool by_failures() const noexcept { return by_failures_; }

private:
    std::vector<id_range> lost_;
    bool by_failures_ = true;
};

/// What a store holds and did, for reports and tests.
struct store_counters {
    std::uint64_t bytes_held = 0;         ///< block bytes in this rank's memory, all versions
    std::uint64_t blocks_served = 0;      ///< to other ranks' loads
    std::uint64_t requests_rerouted = 0;  ///< sent again to another copy after a failure
    std::uint64_t malformed = 0;          ///< store messages that did not parse, dropped
    std::uint64_t versions_learnt = 0;    ///< on a replacement: a version the survivors completed after it joined
    std::uint64_t blocks_repaired = 0;    ///< copies this rank sent to restore the replication level
};

/// A replicated store over all logical ranks of the runtime. submit and load
/// are collective: every logical rank calls them in the same order (a rank
/// with nothing to give or ask passes nothing). The calling thread waits;
/// the runtime's communication thread serves the other ranks meanwhile.
class store {
public:
    /// Blocks of `block_bytes` bytes each. Throws rampart::invalid_argument
    /// for a block size of 0, more copies than ranks, or a permutation range
    /// that is not a whole number of blocks.
    explicit store(std::size_t block_bytes, options opts = {});
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    /// Stores this rank's blocks as a new version of `total_blocks` blocks
    /// (ids 0..total_blocks-1, each submitted by exactly one rank) and
    /// returns its number (1, 2, ...). The previous version is dropped only
    /// once the new one is complete everywhere.
    ///
    ///     std::vector<double> mine(...);   // blocks [first, first + n)
    ///     s.submit({{first, std::as_bytes(std::span(mine))}}, total);
    std::uint64_t submit(std::span<const block_run> runs, std::uint64_t total_blocks);
    std::uint64_t submit(std::uint64_t first_id, std::span<const std::byte> bytes, std::uint64_t total_blocks) {
        block_run run{first_id, bytes};
        return submit(std::span<const block_run>(&run, 1), total_blocks);
    }
    /// Blocks [first_id, first_id + count) written by `serialize(id, out)`
    /// into a block of block_bytes() bytes each.
    std::uint64_t submit(std::uint64_t first_id, std::uint64_t count,
                         const std::function<void(std::uint64_t, std::span<std::byte>)>& serialize,
                         std::uint64_t total_blocks);

    /// Loads the blocks of `ranges` from surviving copies and returns their
    /// bytes in the order asked. Throws store_error naming the lost blocks
    /// when no copy of some block survives (nothing is returned then), and
    /// rampart::invalid_argument for ids outside the version or ranges that
    /// overlap. Serves the other ranks' requests meanwhile.
    std::vector<char> load(std::span<const id_range> ranges);
    std::vector<char> load(std::initializer_list<id_range> ranges) {
        return load(std::span<const id_range>(ranges.begin(), ranges.size()));
    }
    /// The same into memory of the caller's, which must hold exactly the
    /// blocks' bytes (else rampart::invalid_argument, after taking part in
    /// the collective step): no allocation, no zero-fill, the blocks land
    /// where the program wants them. After an error its content is partial.
    ///
    ///     std::vector<double> field(count * per_block);      // the program's own array
    ///     s.load({{first, count}}, std::as_writable_bytes(std::span(field)));
    void load(std::span<const id_range> ranges, std::span<std::byte> into);
    void load(std::initializer_list<id_range> ranges, std::span<std::byte> into) {
        load(std::span<const id_range>(ranges.begin(), ranges.size()), into);
    }
    /// The same into values of a trivially copyable type.
    template <class T>
    std::vector<T> load_as(std::span<const id_range> ranges) {
        static_assert(std::is_trivially_copyable_v<T>);
        std::vector<char> bytes = load(ranges);
        if (bytes.size() % sizeof(T) != 0)
            throw rampart::invalid_argument("rampart::store::load_as: " + std::to_string(bytes.size()) +
                                            " bytes are not a whole number of values");
        std::vector<T> out(bytes.size() / sizeof(T));
        if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
    }

    /// Restores the replication level of the newest version after failures
    /// (the restore paper's IV-E): ranks that replaced dead ones, and the
    /// next living rank after each rank lost for good, get the copies they
    /// should hold from a rank that has them. Collective. The store also
    /// starts this by itself after every recovery, without waiting; this call
    /// waits until every copy is held again (blocks whose copies are all lost
    /// stay lost). Returns the blocks this rank sent.
    ///
    ///     s.restore_replication();   // now r more failures can be survived again
    std::uint64_t restore_replication();

    /// The newest complete version (0 before the first submit).
    std::uint64_t version() const;
    /// Blocks in the newest complete version.
    std::uint64_t blocks() const;
    std::size_t block_bytes() const noexcept;
    int replicas() const noexcept;
    /// Where this store puts the copies of `blocks` blocks: its options, and
    /// the ranks ordered by node (rampart::comm::nodes_at_start).
    ///
    ///     int rank = s.placement_of(s.blocks()).holder(42, 1);  // copy 1 of block 42
    placement placement_of(std::uint64_t blocks) const;
    store_counters counters() const;

    class impl;

private:
    friend class checkpoints;
    /// Loads `ranges` of the newest complete version alone, not collectively:
    /// for a replacement before it takes part in any collective step.
    std::vector<char> fetch(std::span<const id_range> ranges);
    /// The next collective operation carries `tag` (a checkpoint's iteration).
    void tag_next_operation(std::uint64_t tag);
    /// On a replacement: the survivors had begun the operation with this tag
    /// or a later one when it joined, without it (it must not do it again).
    bool done_without_me(std::uint64_t tag) const;
    std::shared_ptr<impl> impl_;
};

}  // namespace rampart::store
