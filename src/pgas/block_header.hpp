#pragma once
// The header of a block in shared memory: who holds the block's lock and
// what the holder is doing, and where its two copies are. Every write to a
// block (put, acc, read_inc, a repair, a new shadow) holds the lock for
// both copies, so that writes to a block are ordered alike on both, and
// writes the primary before the shadow: while the primary is being written
// the shadow is whole, and while the shadow is, the primary is. When the
// holder dies, whoever takes the lock next finds in `phase` and `region`
// which copy may be torn and copies the other over it (array_repair.cpp).
// The lock and the places are read and written with std::atomic_ref only.

#include <atomic>
#include <cstdint>

namespace rampart::pgas::detail {

enum phase : std::uint32_t {
    idle = 0,
    writing_primary = 1,
    writing_shadow = 2,
    copying_new_shadow = 3,  // a new shadow is filled; published only when whole
};

struct alignas(64) block_header {
    std::uint32_t lock;     // 0: free; else the holder's rank + 1
    std::uint32_t phase;    // what the holder is doing
    std::int64_t region[4]; // rows [0], [1] and columns [2], [3] of the block being written
    std::uint64_t primary;  // places (see place), 0: none
    std::uint64_t shadow;
    std::uint32_t lost;     // every copy is gone
};

/// Where a copy is: the rank holding it, its segment and the byte offset
/// there (a multiple of 64), in one word so that a reader loads it at once.
struct place {
    int rank = -1;
    int seg = 0;
    std::uint64_t offset = 0;

    static constexpr int max_ranks = 65535;
    static constexpr int max_segments = 256;
    static constexpr std::uint64_t max_offset = (std::uint64_t{1} << 46) - 64;

    std::uint64_t word() const noexcept {
        return (static_cast<std::uint64_t>(rank + 1) << 48) | (static_cast<std::uint64_t>(seg) << 40) |
               (offset >> 6);
    }
    static place of(std::uint64_t w) noexcept {
        if (w == 0) return {};
        return {static_cast<int>(w >> 48) - 1, static_cast<int>((w >> 40) & 0xff), (w & ((1ull << 40) - 1)) << 6};
    }
    bool valid() const noexcept { return rank >= 0; }
};

inline std::uint64_t load(std::uint64_t& w) { return std::atomic_ref(w).load(std::memory_order_acquire); }
inline void store(std::uint64_t& w, std::uint64_t v) { std::atomic_ref(w).store(v, std::memory_order_release); }

/// Makes the phase written before the data that follows visible first, so
/// that a holder that dies leaves a phase that covers what it wrote. x86
/// keeps stores in order; elsewhere a full fence is needed.
inline void publish_phase(block_header& h, std::uint32_t ph) {
    std::atomic_ref(h.phase).store(ph, std::memory_order_release);
#if defined(__x86_64__) || defined(__i386__)
    std::atomic_signal_fence(std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace rampart::pgas::detail
