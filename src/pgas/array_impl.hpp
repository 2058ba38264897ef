#pragma once
// The state of one array on one rank, shared by array_core.cpp (creation,
// destruction), array_operations.cpp (put, get, acc, read_inc) and
// array_repair.cpp (locks, repairs, promotions, new shadows).

#include <rampart/pgas/detail/array_core.hpp>

#include "block_header.hpp"
#include "pgas_service.hpp"
#include "shared_segment.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rampart::pgas::detail {

class message_path;

struct array_core::impl {
    std::string name;
    distribution dist;
    element_ops ops;
    bool shadows = true;                      // keep a second copy of every block
    std::uint64_t uid = 0;
    pgas_service& svc;
    int me = 0, p = 1;

    std::vector<int> owner;                   // block -> the rank that keeps its header (its first primary)
    std::vector<std::uint64_t> header_offset; // block -> offset of its header in its owner's segment 0
    std::vector<std::int64_t> pids;           // rank -> process id (names of its segments)
    std::vector<std::uint64_t> node_of;       // rank -> node

    std::vector<shared_segment> own;          // this rank's segments, by number
    mutable std::mutex map_m;                 // mapping others' segments
    mutable std::vector<shared_segment> mapped;
    mutable std::unique_ptr<std::atomic<char*>[]> bases;  // rank * max_segments + seg -> memory

    std::mutex reshadow_m;                    // one re-shadowing at a time (it adds to own)
    std::shared_ptr<void> repairs_job;        // the service's job after deaths
    std::atomic<bool> gone{false};
    std::shared_ptr<message_path> msg;        // ranks on several nodes: the message path, not the above
    mutable std::mutex counters_m;
    mutable array_counters counts;

    impl(std::string n, element_ops o);

    // Memory.
    char* base(int rank, int seg) const;
    char* at(place pl) const { return base(pl.rank, pl.seg) + pl.offset; }
    block_header& header(int b) const {
        return *reinterpret_cast<block_header*>(base(owner[static_cast<std::size_t>(b)], 0) +
                                                header_offset[static_cast<std::size_t>(b)]);
    }
    std::size_t block_bytes(int b) const {
        return static_cast<std::size_t>(dist.block_patch(b).elements()) * ops.bytes;
    }

    // Locks and failures (array_repair.cpp).
    void acquire(int b) const;
    void release(int b) const;
    void settle(int b) const;
    void repair(int b) const;
    void settle_all() const;
    int reshadow_mine();
    bool every_block_shadowed() const;
    /// After deaths and recoveries: repairs, promotions, new shadows.
    void after_deaths();
    /// This rank's part of destroying the array (after the barrier).
    void release();
    void count(std::uint64_t array_counters::*field) const;
};

/// The number of the next array (or exchange of a creation), counted alike
/// on every rank: creation is collective.
std::uint64_t arrays_created_next();

/// How an attempt at creating an array ended.
enum class attempt { made, again, too_few_ranks };

// Arrays whose ranks span nodes (array_messages.cpp).
bool spans_nodes(const pgas_service& svc);
attempt try_create_messages(array_core::impl& a, const std::function<distribution(int)>& cut);
void put_by_messages(const array_core::impl& a, const patch& p, const void* data);
void get_by_messages(const array_core::impl& a, const patch& p, void* out);
void acc_by_messages(const array_core::impl& a, const patch& p, const void* data, const void* alpha);

/// Copies the rows of patch q between memory laid out as patch `a` and
/// memory laid out as patch `b` (row-major, `es` bytes an element); with
/// `bypass_caches`, a run of at least streaming_bytes goes around the caches.
void copy_rows(const patch& q, const patch& a, const char* from, const patch& b, char* to, std::size_t es,
               bool bypass_caches = false);
inline constexpr std::size_t streaming_bytes = std::size_t{512} << 10;

}  // namespace rampart::pgas::detail
