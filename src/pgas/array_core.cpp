// An array's life: its collective creation (who holds which copy, the
// shared memory of every rank's copies), its destruction, and what it tells
// about itself.
//
// Data path: every rank keeps its copies in a POSIX shared-memory segment
// that the other ranks of its node map, so that put, get, acc and read_inc
// are copies in memory made by the calling thread, with no message and no
// MPI call (MPI's own windows neither report a death nor survive one:
// docs/pgas.md). Failure path: deaths come from the engine's recoveries,
// which rest on ULFM's failure notification; the service's thread then
// repairs, promotes and re-shadows (array_repair.cpp).

#include "array_impl.hpp"
#include "message_path.hpp"
#include "placement.hpp"

#include <rampart/task/errors.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <utility>

namespace rampart::pgas::detail {

namespace {

std::atomic<std::uint64_t> arrays_created{0};

std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }

// The first 64 bytes of a rank's segment 0: what it was made for. A rank
// that reads another's stamp learns whether that rank made its memory, and
// from the same view of the ranks (see try_create).
struct stamp {
    std::uint64_t magic;
    std::uint64_t uid;
    std::uint64_t view;
    static constexpr std::uint64_t magic_value = 0x5241'4d50'5047'4153;  // "RAMPPGAS"
};
constexpr std::size_t stamp_bytes = 64;

// A hash of what the layout rests on: the ranks in it and their processes.
std::uint64_t view_of(const array_core::impl& a, const std::vector<char>& alive) {
    std::string key(alive.begin(), alive.end());
    for (auto pid : a.pids) key += std::to_string(pid) + ",";
    key += std::to_string(a.dist.blocks());
    return std::hash<std::string>{}(key) | 1;
}

struct creation_part {
    std::int64_t pid;
    std::uint64_t node;
};

// What each rank tells at creation: its process id, its node, and which
// ranks it knows to be dead.
std::vector<char> my_part(const pgas_service& svc, const std::vector<char>& alive) {
    const creation_part c{static_cast<std::int64_t>(::getpid()), svc.node()};
    std::vector<char> out(sizeof c + alive.size());
    std::memcpy(out.data(), &c, sizeof c);
    std::memcpy(out.data() + sizeof c, alive.data(), alive.size());
    return out;
}

}  // namespace

std::uint64_t arrays_created_next() { return arrays_created.fetch_add(1) + 1; }

array_core::impl::impl(std::string n, element_ops o)
    : name(std::move(n)), dist(distribution::even({1}, 1)), ops(o), svc(pgas_service::get()), me(svc.rank()), p(svc.size()) {
    bases = std::make_unique<std::atomic<char*>[]>(static_cast<std::size_t>(p) * place::max_segments);
    for (std::size_t i = 0; i < static_cast<std::size_t>(p) * place::max_segments; ++i) bases[i].store(nullptr);
}

char* array_core::impl::base(int rank, int seg) const {
    auto& slot = bases[static_cast<std::size_t>(rank) * place::max_segments + static_cast<std::size_t>(seg)];
    if (char* b = slot.load(std::memory_order_acquire)) return b;
    std::lock_guard l(map_m);
    if (char* b = slot.load(std::memory_order_relaxed)) return b;
    mapped.push_back(shared_segment::open(segment_name(pids[static_cast<std::size_t>(rank)], uid, seg)));
    slot.store(mapped.back().data(), std::memory_order_release);
    return mapped.back().data();
}

void array_core::impl::count(std::uint64_t array_counters::*field) const {
    std::lock_guard l(counters_m);
    ++(counts.*field);
}

namespace {

// Learns every rank's process and node; returns the ranks alive for the
// array (those that took part and that no one knew dead).
std::vector<char> learn_ranks(array_core::impl& a) {
    auto parts = a.svc.exchange(a.uid, my_part(a.svc, a.svc.alive()));
    const auto n = static_cast<std::size_t>(a.p);
    std::vector<char> alive(n, 1);
    a.pids.assign(n, 0);
    a.node_of.assign(n, 0);
    for (std::size_t r = 0; r < n; ++r) {
        if (parts[r].size() != sizeof(creation_part) + n) {
            alive[r] = 0;
            continue;
        }
        creation_part c{};
        std::memcpy(&c, parts[r].data(), sizeof c);
        a.pids[r] = c.pid;
        a.node_of[r] = c.node;
        for (std::size_t q = 0; q < n; ++q)
            if (parts[r][sizeof c + q] == 0) alive[q] = 0;
    }
    return alive;
}

// Lays out every rank's segment 0 (headers of the blocks it owns, then its
// primary copies, then the shadows it holds), creates this rank's and
// fills its headers. False, with nothing made, when fewer ranks live than
// there are blocks.
bool lay_out(array_core::impl& a, const std::vector<char>& alive) {
    const int blocks = a.dist.blocks();
    a.owner = block_owners(blocks, alive);
    if (a.owner.empty()) return false;
    std::vector<int> shadow(static_cast<std::size_t>(blocks));
    for (int b = 0; b < blocks; ++b) shadow[b] = a.shadows ? shadow_host(a.owner[b], a.node_of, alive) : -1;
    a.header_offset.assign(static_cast<std::size_t>(blocks), 0);
    static_assert(sizeof(stamp) <= stamp_bytes);
    std::vector<std::size_t> size(static_cast<std::size_t>(a.p), stamp_bytes), prim(a.header_offset), shad(prim);
    for (int b = 0; b < blocks; ++b) a.header_offset[b] = std::exchange(size[a.owner[b]], size[a.owner[b]] + sizeof(block_header));
    for (int b = 0; b < blocks; ++b) prim[b] = std::exchange(size[a.owner[b]], size[a.owner[b]] + align64(a.block_bytes(b)));
    for (int b = 0; b < blocks; ++b)
        if (shadow[b] >= 0) shad[b] = std::exchange(size[shadow[b]], size[shadow[b]] + align64(a.block_bytes(b)));
    for (std::size_t r = 0; r < size.size(); ++r)  // alike on every rank
        if (size[r] > place::max_offset)
            throw rampart::invalid_argument("rampart::pgas: array '" + a.name + "' is too large");
    a.own.push_back(shared_segment::create(segment_name(::getpid(), a.uid, 0), size[a.me]));
    a.bases[static_cast<std::size_t>(a.me) * place::max_segments].store(a.own[0].data());
    for (int b = 0; b < blocks; ++b) {
        if (a.owner[b] != a.me) continue;
        auto& h = *new (a.own[0].data() + a.header_offset[b]) block_header{};
        h.primary = place{a.me, 0, prim[b]}.word();
        h.shadow = shadow[b] >= 0 ? place{shadow[b], 0, shad[b]}.word() : 0;
    }
    const stamp st{stamp::magic_value, a.uid, view_of(a, alive)};
    std::memcpy(a.own[0].data(), &st, sizeof st);
    return true;
}

// Whether every other rank of the layout made its memory from the same view.
bool same_view_everywhere(array_core::impl& a, const std::vector<char>& alive) {
    const auto mine = view_of(a, alive);
    for (int r = 0; r < a.p; ++r) {
        if (!alive[static_cast<std::size_t>(r)] || r == a.me) continue;
        try {
            stamp st{};
            std::memcpy(&st, a.base(r, 0), sizeof st);
            if (st.magic != stamp::magic_value || st.uid != a.uid || st.view != mine) return false;
        } catch (const rampart::error&) {
            return false;  // it died before it made its memory
        }
    }
    return true;
}

// One attempt at creating the array. It fails, alike on every rank, when a
// rank died during the exchange, seen by some ranks and not by others, or
// before it made its memory: every rank then finds a missing or different
// stamp on some rank (every living rank is in every rank's layout).
// A layout that has more blocks than living ranks makes no memory: the
// attempt fails everywhere (a rank that saw a dying rank's part may still
// have laid out), and the next attempt, where all see the same ranks, tells
// every rank alike.
attempt try_create(array_core::impl& a, const std::function<distribution(int)>& cut) {
    a.uid = arrays_created_next();
    const auto alive = learn_ranks(a);
    a.dist = cut(static_cast<int>(std::count(alive.begin(), alive.end(), 1)));
    const bool laid = lay_out(a, alive);
    a.svc.barrier();  // every segment exists before anyone maps one
    const bool ok = laid && same_view_everywhere(a, alive);
    // Every rank has mapped every segment 0 (or found it missing): the names
    // can go, so that a job that dies leaves nothing behind in /dev/shm.
    a.svc.barrier();
    if (laid) shared_segment::unlink(segment_name(::getpid(), a.uid, 0));
    if (ok) return attempt::made;
    for (int r = 0; r < a.p; ++r)
        if (a.svc.dead(r) && a.pids[static_cast<std::size_t>(r)] != 0)
            shared_segment::unlink(segment_name(a.pids[static_cast<std::size_t>(r)], a.uid, 0));
    std::lock_guard l(a.map_m);
    for (std::size_t i = 0; i < static_cast<std::size_t>(a.p) * place::max_segments; ++i) a.bases[i].store(nullptr);
    a.mapped.clear();
    a.own.clear();
    return laid ? attempt::again : attempt::too_few_ranks;
}

}  // namespace

array_core::array_core(std::string name, std::function<distribution(int)> cut, element_ops ops, bool shadows)
    : impl_(std::make_shared<impl>(std::move(name), ops)) {
    impl& a = *impl_;
    a.shadows = shadows;
    if (a.p > place::max_ranks) throw rampart::invalid_argument("rampart::pgas: more than 65535 ranks");
    constexpr int attempts = 4;
    const std::uint64_t deaths_before = a.svc.deaths();
    const bool across_nodes = spans_nodes(a.svc);
    for (int n = 1;; ++n) {
        const attempt outcome = across_nodes ? try_create_messages(a, cut) : try_create(a, cut);
        if (outcome == attempt::made) break;
        if (outcome == attempt::too_few_ranks && n > 1)  // the second time: seen alike everywhere
            throw rampart::invalid_argument("rampart::pgas: array '" + a.name + "' has " +
                                            std::to_string(a.dist.blocks()) + " blocks, more than the living ranks");
        if (n == attempts)
            throw rampart::error("rampart::pgas: array '" + a.name + "' could not be created: ranks died during " +
                                 std::to_string(attempts) + " attempts");
    }
    std::weak_ptr<impl> weak = impl_;
    a.repairs_job = a.svc.on_deaths([weak] {
        if (auto s = weak.lock()) {
            try {
                if (!s->gone.load()) s->after_deaths();
            } catch (const std::exception& e) {
                std::fprintf(stderr, "rampart::pgas: array '%s': repairs after a failure stopped: %s\n",
                             s->name.c_str(), e.what());
            }
        }
    });
    if (a.svc.deaths() != deaths_before) a.after_deaths();  // deaths during creation: no job yet
}

// While an exception unwinds the stack, the other ranks are not destroying
// the array with this one: its memory goes without the collective barrier
// (the job is ending, or the program has already broken the collective
// order).
array_core::~array_core() {
    if (!impl_) return;  // moved from
    if (!impl_->gone.load()) {
        try {
            if (std::uncaught_exceptions() > 0) {
                impl_->release();
            } else {
                destroy();
            }
        } catch (...) {
        }
    }
    impl_->repairs_job.reset();  // here, never on the service's thread that runs it
}

void array_core::destroy() {
    check_usable("destroy");
    impl_->svc.barrier();  // nobody uses the array any more
    impl_->release();
}

void array_core::impl::release() {
    impl& a = *this;
    a.gone.store(true);
    a.repairs_job.reset();  // waits for a repair under way
    if (a.msg) {
        a.svc.remove_array(a.uid);
        a.msg->stop();
        return;
    }
    for (int seg = 1; seg < static_cast<int>(a.own.size()); ++seg)
        shared_segment::unlink(segment_name(::getpid(), a.uid, seg));
    // The lowest living rank removes the names of the dead ranks' segments.
    int lowest = 0;
    while (lowest < a.p && a.svc.dead(lowest)) ++lowest;
    if (lowest == a.me)
        for (int r = 0; r < a.p; ++r)
            if (a.svc.dead(r) && a.pids[static_cast<std::size_t>(r)] != 0)
                for (int seg = 0; seg < place::max_segments; ++seg)
                    shared_segment::unlink(segment_name(a.pids[static_cast<std::size_t>(r)], a.uid, seg));
    std::lock_guard l(a.map_m);
    for (std::size_t i = 0; i < static_cast<std::size_t>(a.p) * place::max_segments; ++i) a.bases[i].store(nullptr);
    a.mapped.clear();
    a.own.clear();
}

bool array_core::destroyed() const noexcept { return !impl_ || impl_->gone.load(); }

const std::string& array_core::name() const { return impl_->name; }
const distribution& array_core::layout() const { return impl_->dist; }

void array_core::check_usable(const char* what) const {
    if (destroyed())
        throw rampart::invalid_argument(std::string("rampart::pgas: ") + what + " on array '" +
                                        (impl_ ? impl_->name : std::string("(moved from)")) +
                                        "', which was destroyed");
}

void array_core::check_patch(const patch& p, const char* what) const {
    check_usable(what);
    if (auto why = impl_->dist.check(p); !why.empty())
        throw rampart::invalid_argument(std::string("rampart::pgas: ") + what + " on array '" + impl_->name +
                                        "': " + why);
}

std::array<int, 2> array_core::holders(int block) const {
    check_usable("holders");
    if (block < 0 || block >= impl_->dist.blocks())
        throw rampart::invalid_argument("rampart::pgas: holders of block " + std::to_string(block) + " of array '" +
                                        impl_->name + "', which has " + std::to_string(impl_->dist.blocks()));
    if (impl_->msg) return impl_->msg->holders(block);
    auto& h = impl_->header(block);
    return {place::of(load(h.primary)).rank, place::of(load(h.shadow)).rank};
}

int array_core::primary_of(int block) const {
    const auto h = holders(block);  // checks
    if (impl_->msg) return h[0];
    impl_->acquire(block);
    impl_->settle(block);
    const int r = place::of(load(impl_->header(block).primary)).rank;
    impl_->release(block);
    return r;
}

std::vector<int> array_core::differing_copies() const {
    check_usable("differing_copies");
    const impl& a = *impl_;
    if (a.msg) return a.msg->differing_copies();
    std::vector<int> out;
    for (int b = 0; b < a.dist.blocks(); ++b) {
        a.acquire(b);
        a.settle(b);
        const place prim = place::of(load(a.header(b).primary)), shad = place::of(load(a.header(b).shadow));
        if (prim.valid() && shad.valid() && std::memcmp(a.at(prim), a.at(shad), a.block_bytes(b)) != 0)
            out.push_back(b);
        a.release(b);
    }
    return out;
}

array_counters array_core::counters() const {
    if (impl_->msg) return impl_->msg->counters();
    std::lock_guard l(impl_->counters_m);
    return impl_->counts;
}

}  // namespace rampart::pgas::detail
