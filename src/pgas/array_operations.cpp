// put, get, acc and read_inc on the two copies of each block a patch
// touches. A write holds the block's lock and writes the primary, then the
// shadow (block_header.hpp); a read takes no lock and reads the primary, or
// the shadow when the primary's rank is dead.

#include "array_impl.hpp"

#include <rampart/pgas/errors.hpp>

#include <cstring>

namespace rampart::pgas::detail {

namespace {

using impl = array_core::impl;

[[noreturn]] void lost(const impl& a, const patch& asked, int b) {
    throw data_lost(a.name, asked, b, a.dist.block_patch(b));
}

// Nothing is written when some block of the patch has no copy left.
void check_not_lost(const impl& a, const patch& p) {
    for (int b : a.dist.blocks_of(p))
        if (load(a.header(b).primary) == 0) lost(a, p, b);
}

void set_region(block_header& h, const patch& q, const patch& block) {
    h.region[0] = q.lo[0] - block.lo[0];
    h.region[1] = q.hi[0] - block.lo[0];
    h.region[2] = q.lo[1] - block.lo[1];
    h.region[3] = q.hi[1] - block.lo[1];
}

// Writes the part q of a patch into block b's two copies, primary first,
// with `write(memory of a copy)`.
template <class Write>
void write_block(const impl& a, const patch& asked, int b, const patch& q, Write&& write) {
    a.acquire(b);
    a.settle(b);
    auto& h = a.header(b);
    const place prim = place::of(load(h.primary)), shad = place::of(load(h.shadow));
    if (!prim.valid()) {
        a.release(b);
        lost(a, asked, b);
    }
    set_region(h, q, a.dist.block_patch(b));
    publish_phase(h, writing_primary);
    write(a.at(prim));
    if (shad.valid()) {
        publish_phase(h, writing_shadow);
        write(a.at(shad));
    }
    a.release(b);
}

// The copy to read block b from: the primary, or the shadow while a dead
// primary has not been replaced yet; mends what a dead writer left first.
const char* readable(const impl& a, const patch& asked, int b) {
    auto& h = a.header(b);
    const auto held = std::atomic_ref(h.lock).load(std::memory_order_acquire);
    if (held != 0 && a.svc.dead(static_cast<int>(held) - 1)) {
        a.acquire(b);
        a.settle(b);
        a.release(b);
    }
    for (int attempt = 0; attempt < 2; ++attempt) {
        const place prim = place::of(load(h.primary));
        if (prim.valid() && !a.svc.dead(prim.rank)) return a.at(prim);
        const place shad = place::of(load(h.shadow));
        if (shad.valid() && !a.svc.dead(shad.rank)) return a.at(shad);
        a.acquire(b);  // both look dead or gone: settle, then look again
        a.settle(b);
        a.release(b);
    }
    lost(a, asked, b);
}

}  // namespace

void array_core::put(const patch& p, const void* data) {
    const impl& a = *impl_;
    check_not_lost(a, p);
    const auto* src = static_cast<const char*>(data);
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        write_block(a, p, b, q, [&](char* copy) { copy_rows(q, p, src, block, copy, a.ops.bytes); });
    }
}

void array_core::get(const patch& p, void* out) const {
    const impl& a = *impl_;
    auto* dst = static_cast<char*>(out);
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        copy_rows(q, block, readable(a, p, b), p, dst, a.ops.bytes);
    }
}

void array_core::acc(const patch& p, const void* data, const void* alpha) {
    const impl& a = *impl_;
    check_not_lost(a, p);
    const auto* src = static_cast<const char*>(data);
    const std::size_t es = a.ops.bytes;
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        write_block(a, p, b, q, [&](char* copy) {
            for (std::int64_t i = q.lo[0]; i < q.hi[0]; ++i) {
                const auto from = static_cast<std::size_t>((i - p.lo[0]) * p.cols() + (q.lo[1] - p.lo[1])) * es;
                const auto to = static_cast<std::size_t>((i - block.lo[0]) * block.cols() + (q.lo[1] - block.lo[1])) * es;
                a.ops.acc(copy + to, src + from, static_cast<std::size_t>(q.cols()), alpha);
            }
        });
    }
}

// Exactly once: the old value is read and the new one written under the
// lock, into the primary and then the shadow. A caller that dies with the
// primary written leaves the increment done (the shadow is completed from
// the primary); one that dies before leaves it undone.
void array_core::read_inc(std::array<std::int64_t, 2> index, const void* inc, void* old) {
    const impl& a = *impl_;
    const patch p = patch::element(index[0], index[1]);
    const int b = a.dist.block_of(index);
    const patch block = a.dist.block_patch(b);
    const std::size_t es = a.ops.bytes;
    const auto at = static_cast<std::size_t>((index[0] - block.lo[0]) * block.cols() + (index[1] - block.lo[1])) * es;
    bool first = true;
    write_block(a, p, b, p, [&](char* copy) {
        if (first) {  // the primary: the value before
            std::memcpy(old, copy + at, es);
            first = false;
        }
        std::memcpy(copy + at, old, es);
        a.ops.add(copy + at, inc);
    });
}

}  // namespace rampart::pgas::detail
