// Locks of blocks and what a failure leaves to mend: a lock held by a dead
// rank (its write undone or completed, see block_header.hpp), a dead
// primary (its shadow takes over), a dead shadow (dropped), and blocks left
// with one copy (a new shadow on a living rank: re-shadowing).

#include "array_impl.hpp"
#include "message_path.hpp"
#include "placement.hpp"

#include <rampart/task/errors.hpp>

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <thread>

namespace rampart::pgas::detail {

// A copy that bypasses the caches (non-temporal stores): for a shadow, which
// is written now and read only after a failure, so that it does not push the
// primary and the caller's data out of the caches.
void stream_copy(char* to, const char* from, std::size_t n) {
#if defined(__SSE2__)
    while (n > 0 && (reinterpret_cast<std::uintptr_t>(to) & 15) != 0) {
        *to++ = *from++;
        --n;
    }
    for (; n >= 64; n -= 64, to += 64, from += 64) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 32));
        const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 48));
        _mm_stream_si128(reinterpret_cast<__m128i*>(to), a);
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + 16), b);
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + 32), c);
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + 48), d);
    }
    _mm_sfence();
#endif
    std::memcpy(to, from, n);
}

void copy_rows(const patch& q, const patch& a, const char* from, const patch& b, char* to, std::size_t es,
               bool bypass_caches) {
    const auto row_bytes = static_cast<std::size_t>(q.cols()) * es;
    if (q.cols() == a.cols() && q.cols() == b.cols()) {  // whole rows in both: one run (every 1-D patch)
        const auto src = static_cast<std::size_t>((q.lo[0] - a.lo[0]) * a.cols()) * es;
        const auto dst = static_cast<std::size_t>((q.lo[0] - b.lo[0]) * b.cols()) * es;
        const auto n = row_bytes * static_cast<std::size_t>(q.rows());
        if (bypass_caches && n >= streaming_bytes) {
            stream_copy(to + dst, from + src, n);
        } else {
            std::memcpy(to + dst, from + src, n);
        }
        return;
    }
    for (std::int64_t i = q.lo[0]; i < q.hi[0]; ++i) {
        const auto src = static_cast<std::size_t>((i - a.lo[0]) * a.cols() + (q.lo[1] - a.lo[1])) * es;
        const auto dst = static_cast<std::size_t>((i - b.lo[0]) * b.cols() + (q.lo[1] - b.lo[1])) * es;
        std::memcpy(to + dst, from + src, row_bytes);
    }
}

namespace {

inline void pause_briefly(int spins) {
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (spins < 1024) {
        sched_yield();  // the holder may share this core
    } else {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

patch region_of(const block_header& h, const patch& block) {
    patch r;
    r.lo = {block.lo[0] + h.region[0], block.lo[1] + h.region[2]};
    r.hi = {block.lo[0] + h.region[1], block.lo[1] + h.region[3]};
    return intersect(r, block);
}

}  // namespace

// Waits for the lock; a holder that died is not waited for: the lock is
// taken from it and its write mended. Bounded by the detection of a death.
void array_core::impl::acquire(int b) const {
    auto& h = header(b);
    std::atomic_ref lock(h.lock);
    const auto mine = static_cast<std::uint32_t>(me + 1);
    for (int spins = 0;; ++spins) {
        std::uint32_t held = 0;
        if (lock.compare_exchange_weak(held, mine, std::memory_order_acquire, std::memory_order_relaxed)) return;
        if (held != 0 && svc.dead(static_cast<int>(held) - 1) &&
            lock.compare_exchange_strong(held, mine, std::memory_order_acquire, std::memory_order_relaxed)) {
            repair(b);
            return;
        }
        pause_briefly(spins);
    }
}

void array_core::impl::release(int b) const {
    auto& h = header(b);
    std::atomic_ref(h.phase).store(idle, std::memory_order_relaxed);
    std::atomic_ref(h.lock).store(0, std::memory_order_release);
}

// The write of a holder that died: the copy it was writing may be torn;
// the other is whole and is copied over it (the write is undone if it was
// in the primary, completed if in the shadow). The whole copy is used even
// when its rank is dead too (the writer held it, say): on the node its
// memory is still mapped. Without a second copy (an array without shadows)
// the torn block is lost.
void array_core::impl::repair(int b) const {
    auto& h = header(b);
    const auto ph = std::atomic_ref(h.phase).load(std::memory_order_acquire);
    if (ph != writing_primary && ph != writing_shadow) return;
    const place prim = place::of(load(h.primary)), shad = place::of(load(h.shadow));
    const place& torn = ph == writing_primary ? prim : shad;
    const place& whole = ph == writing_primary ? shad : prim;
    if (!torn.valid()) return;
    if (!whole.valid()) {
        store(h.primary, 0);
        store(h.shadow, 0);
        if (std::atomic_ref(h.lost).exchange(1) == 0) count(&array_counters::lost_blocks);
        return;
    }
    const patch block = dist.block_patch(b), r = region_of(h, block);
    if (!r.empty()) copy_rows(r, block, at(whole), block, at(torn), ops.bytes);
    count(&array_counters::repairs);
}

// Under the lock: a dead primary gives way to its shadow, a dead shadow is
// dropped, a block with neither is lost.
void array_core::impl::settle(int b) const {
    auto& h = header(b);
    const place prim = place::of(load(h.primary)), shad = place::of(load(h.shadow));
    const bool prim_ok = prim.valid() && !svc.dead(prim.rank), shad_ok = shad.valid() && !svc.dead(shad.rank);
    if (prim.valid() && !prim_ok) {
        store(h.primary, shad_ok ? shad.word() : 0);
        store(h.shadow, 0);
        if (shad_ok) {
            count(&array_counters::promotions);
        } else if (std::atomic_ref(h.lost).exchange(1) == 0) {
            count(&array_counters::lost_blocks);
        }
    } else if (shad.valid() && !shad_ok) {
        store(h.shadow, 0);
    }
}

void array_core::impl::settle_all() const {
    for (int b = 0; b < dist.blocks(); ++b) {
        acquire(b);
        settle(b);
        release(b);
    }
}

namespace {
std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }
}  // namespace

// This rank's part of re-shadowing: the blocks left with one copy whose new
// shadow falls to it (every rank computes the same hosts from the same
// deaths) get a copy in a new segment of this rank. Returns how many.
int array_core::impl::reshadow_mine() {
    std::lock_guard one(reshadow_m);
    if (!shadows) return 0;
    const auto alive_now = svc.alive();
    auto host_for = [&](int b) {
        auto& h = header(b);
        const place prim = place::of(load(h.primary));
        if (load(h.shadow) != 0 || !prim.valid() || svc.dead(prim.rank)) return -1;
        return shadow_host(prim.rank, node_of, alive_now);
    };
    std::vector<int> mine;
    std::size_t bytes = 0;
    for (int b = 0; b < dist.blocks(); ++b)
        if (host_for(b) == me) {
            mine.push_back(b);
            bytes += align64(block_bytes(b));
        }
    if (mine.empty()) return 0;
    const int seg = static_cast<int>(own.size());
    if (seg >= place::max_segments) throw rampart::error("rampart::pgas: array '" + name + "': too many re-shadowings");
    own.push_back(shared_segment::create(segment_name(::getpid(), uid, seg), bytes));
    bases[static_cast<std::size_t>(me) * place::max_segments + static_cast<std::size_t>(seg)].store(own.back().data());
    int made = 0;
    std::size_t offset = 0;
    for (int b : mine) {
        acquire(b);
        settle(b);
        auto& h = header(b);
        if (host_for(b) == me) {
            std::atomic_ref(h.phase).store(copying_new_shadow, std::memory_order_release);
            std::memcpy(own.back().data() + offset, at(place::of(load(h.primary))), block_bytes(b));
            store(h.shadow, place{me, seg, offset}.word());
            count(&array_counters::reshadowed);
            ++made;
        }
        release(b);
        offset += align64(block_bytes(b));
    }
    return made;
}

bool array_core::impl::every_block_shadowed() const {
    if (!shadows) return true;
    const auto alive_now = svc.alive();
    for (int b = 0; b < dist.blocks(); ++b) {
        auto& h = header(b);
        const place prim = place::of(load(h.primary)), shad = place::of(load(h.shadow));
        if (!prim.valid()) continue;  // lost
        if (svc.dead(prim.rank)) return false;
        if ((!shad.valid() || svc.dead(shad.rank)) && shadow_host(prim.rank, node_of, alive_now) >= 0) return false;
    }
    return true;
}

void array_core::impl::after_deaths() {
    if (msg) return msg->after_recovery();
    settle_all();
    reshadow_mine();
}

void array_core::reshadow() {
    check_usable("reshadow");
    impl& a = *impl_;
    if (a.msg) return a.msg->reshadow();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
        a.settle_all();
        a.reshadow_mine();
        if (a.every_block_shadowed()) return;
        if (std::chrono::steady_clock::now() > deadline)
            throw rampart::error("rampart::pgas: array '" + a.name +
                                 "': re-shadowing did not end within 60 s (a living rank does not take part)");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

}  // namespace rampart::pgas::detail
