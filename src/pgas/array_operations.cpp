// put, get, acc and read_inc on the two copies of each block a patch
// touches. A write holds the block's lock and writes the primary, then the
// shadow (block_header.hpp); a read takes no lock (unless a dead rank holds
// it, or the block must be settled first) and reads the primary, or the
// shadow when the primary's rank is dead.

#include "array_impl.hpp"
#include "kill_points.hpp"
#include "message_path.hpp"

#include <rampart/pgas/detail/kill_hook.hpp>
#include <rampart/pgas/errors.hpp>
#include <rampart/task/errors.hpp>

#include <csignal>
#include <cstdio>

#include <cstring>

namespace rampart::pgas::detail {

namespace {

using impl = array_core::impl;

[[noreturn]] void lost(const impl& a, const patch& asked, int b) {
    throw data_lost(a.name, asked, b, a.dist.block_patch(b));
}

// Nothing is written when some block of the patch has no copy left, or
// none on a living rank (not settled yet).
void check_not_lost(const impl& a, const patch& p) {
    for (int b : a.dist.blocks_of(p)) {
        const place prim = place::of(load(a.header(b).primary)), shad = place::of(load(a.header(b).shadow));
        const bool prim_ok = prim.valid() && !a.svc.dead(prim.rank), shad_ok = shad.valid() && !a.svc.dead(shad.rank);
        if (!prim_ok && !shad_ok) lost(a, p, b);
    }
}

void set_region(block_header& h, const patch& q, const patch& block) {
    h.region[0] = q.lo[0] - block.lo[0];
    h.region[1] = q.hi[0] - block.lo[0];
    h.region[2] = q.lo[1] - block.lo[1];
    h.region[3] = q.hi[1] - block.lo[1];
}

// The first half of q's rows, or of its columns when it has one row.
patch first_half(const patch& q) {
    patch h = q;
    if (q.rows() > 1) h.hi[0] = q.lo[0] + q.rows() / 2;
    else h.hi[1] = q.lo[1] + q.cols() / 2;
    return h;
}

// Writes the part q of a patch into block b's two copies, primary first,
// with `write(memory of a copy, the part of q to write, whether the copy is
// the shadow)`.
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
    const kill_step k = kill_now(prim.rank);
    if (k == kill_step::in_primary) {
        write(a.at(prim), first_half(q), false);
        die(a.me, "in_primary");
    }
    write(a.at(prim), q, false);
    if (shad.valid()) {
        publish_phase(h, writing_shadow);
        if (k == kill_step::between) die(a.me, "between");
        write(a.at(shad), q, true);
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
    if (a.msg) return put_by_messages(a, p, data);
    check_not_lost(a, p);
    const auto* src = static_cast<const char*>(data);
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        write_block(a, p, b, q, [&](char* copy, const patch& part, bool shadow) {
            if (!part.empty()) copy_rows(part, p, src, block, copy, a.ops.bytes, shadow);
        });
    }
}

void array_core::get(const patch& p, void* out) const {
    const impl& a = *impl_;
    if (a.msg) return get_by_messages(a, p, out);
    auto* dst = static_cast<char*>(out);
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        copy_rows(q, block, readable(a, p, b), p, dst, a.ops.bytes);
    }
}

void array_core::acc(const patch& p, const void* data, const void* alpha) {
    const impl& a = *impl_;
    if (a.msg) return acc_by_messages(a, p, data, alpha);
    check_not_lost(a, p);
    const auto* src = static_cast<const char*>(data);
    const std::size_t es = a.ops.bytes;
    for (int b : a.dist.blocks_of(p)) {
        const patch block = a.dist.block_patch(b), q = intersect(p, block);
        write_block(a, p, b, q, [&](char* copy, const patch& part, bool) {
            // Whole rows in both layouts (every 1-D patch) are one run.
            const bool one_run = part.cols() == p.cols() && part.cols() == block.cols();
            const std::int64_t runs = one_run ? 1 : part.rows(), run = one_run ? part.elements() : part.cols();
            for (std::int64_t k = 0; k < runs; ++k) {
                const std::int64_t i = part.lo[0] + k;
                const auto from = static_cast<std::size_t>((i - p.lo[0]) * p.cols() + (part.lo[1] - p.lo[1])) * es;
                const auto to =
                    static_cast<std::size_t>((i - block.lo[0]) * block.cols() + (part.lo[1] - block.lo[1])) * es;
                a.ops.acc(copy + to, src + from, static_cast<std::size_t>(run), alpha);
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
    if (a.msg) return a.msg->read_inc(b, p, index, inc, old);
    const patch block = a.dist.block_patch(b);
    const std::size_t es = a.ops.bytes;
    const auto at = static_cast<std::size_t>((index[0] - block.lo[0]) * block.cols() + (index[1] - block.lo[1])) * es;
    bool first = true;
    write_block(a, p, b, p, [&](char* copy, const patch& part, bool) {
        if (part.empty()) return;
        if (first) {  // the primary: the value before
            std::memcpy(old, copy + at, es);
            first = false;
        }
        std::memcpy(copy + at, old, es);
        a.ops.add(copy + at, inc);
    });
}

}  // namespace rampart::pgas::detail
