// The holders' side of the message path (message_path.hpp): a primary
// applies an operation, numbers it and forwards it; a shadow applies the
// numbers in order and answers the caller; both keep what each operation
// made until its caller has the answer, so that an operation asked again
// is not applied twice. Handlers run on the engine thread and never wait.

#include "kill_points.hpp"
#include "message_path.hpp"
#include "pgas_service.hpp"
#include "placement.hpp"

#include <rampart/task/errors.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

namespace rampart::pgas::detail {

namespace {

// A shadow keeps at most this many forwards past a gap (a dropped one,
// which comes again after the recovery that dropped it).
constexpr std::uint64_t max_early = 4096;

// Whether the region of `m` is a non-empty rectangle inside `block`, of
// one element for read_inc, with data and operand of the sizes it needs.
bool well_formed(const message& m, const patch& block, std::size_t es) {
    const auto& r = m.region;
    if (r[0] < 0 || r[0] >= r[1] || r[1] > block.rows() || r[2] < 0 || r[2] >= r[3] || r[3] > block.cols())
        return false;
    const auto elements = static_cast<std::size_t>((r[1] - r[0]) * (r[3] - r[2]));
    switch (m.op) {
        case op_kind::put: return m.data.size() == elements * es && m.operand.empty();
        case op_kind::get: return m.data.empty() && m.operand.empty();
        case op_kind::acc: return m.data.size() == elements * es && m.operand.size() == es;
        case op_kind::read_inc: return elements == 1 && m.data.empty() && m.operand.size() == es;
    }
    return false;
}

void append(std::vector<char>& out, const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    out.insert(out.end(), c, c + n);
}

template <class T>
bool take(const std::vector<char>& in, std::size_t& at, T& v) {
    if (in.size() - at < sizeof v) return false;
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return true;
}

}  // namespace

message_path::message_path(std::string name, std::uint64_t uid, const distribution& dist, element_ops ops,
                           bool shadows, std::vector<int> primary, std::vector<int> shadow, pgas_service& svc)
    : name_(std::move(name)), uid_(uid), dist_(dist), ops_(ops), shadows_(shadows), svc_(svc), me_(svc.rank()),
      primary_(std::move(primary)), shadow_(std::move(shadow)) {
    for (int b = 0; b < dist_.blocks(); ++b) {
        const auto i = static_cast<std::size_t>(b);
        if (primary_[i] != me_ && shadow_[i] != me_) continue;
        held& h = held_[b];
        h.primary = primary_[i] == me_;
        h.peer = h.primary ? shadow_[i] : primary_[i];
        h.bytes.assign(static_cast<std::size_t>(dist_.block_patch(b).elements()) * ops_.bytes, 0);
    }
    // Requests come at any time, also while this rank computes: its engine
    // must look for them without its idle naps of milliseconds (it still
    // pauses, briefly, after a long stretch with nothing to do).
    svc_.busy_for_operations(1);
}

message_path::~message_path() { stop(); }

void message_path::send(int dest, const message& m) { svc_.send_array_message(dest, uid_, encode_message(m)); }

void message_path::answer(int dest, std::uint64_t seq, answer_status st, int hint, std::vector<char> result) {
    message a;
    a.what = message_kind::answer;
    a.uid = uid_;
    a.seq = seq;
    a.status = static_cast<std::uint32_t>(st);
    a.hint = hint;
    a.result = std::move(result);
    if (dest == me_) {
        on_answer(a);
    } else {
        send(dest, a);
    }
}

void message_path::acknowledge(int primary, int block, std::uint64_t version) {
    message a;
    a.what = message_kind::ack;
    a.uid = uid_;
    a.block = block;
    a.version = version;
    send(primary, a);
}

void message_path::on_message(int source, const message& m) {
    switch (m.what) {
        case message_kind::request: return on_request(source, m);
        case message_kind::forward: return on_forward(source, m);
        case message_kind::answer:
        case message_kind::located: return on_answer(m);
        case message_kind::ack: return on_ack(source, m);
        case message_kind::copy: return on_copy(source, m);
        case message_kind::locate: return on_locate(source, m);
        case message_kind::compare: return on_compare(source, m);
    }
}

// Applies a write to the copy, or reads for a get; returns what the caller
// gets back (get's elements, read_inc's old value).
std::vector<char> message_path::apply(held& h, const message& m) {
    const std::size_t es = ops_.bytes;
    const auto cols = static_cast<std::size_t>(dist_.block_patch(m.block).cols());
    const auto run = static_cast<std::size_t>(m.region[3] - m.region[2]);
    std::vector<char> out;
    for (std::int64_t i = m.region[0], k = 0; i < m.region[1]; ++i, ++k) {
        char* row = h.bytes.data() + (static_cast<std::size_t>(i) * cols + static_cast<std::size_t>(m.region[2])) * es;
        const char* from = m.data.empty() ? nullptr : m.data.data() + static_cast<std::size_t>(k) * run * es;
        switch (m.op) {
            case op_kind::put: std::memcpy(row, from, run * es); break;
            case op_kind::get: append(out, row, run * es); break;
            case op_kind::acc: ops_.acc(row, from, run, m.operand.data()); break;
            case op_kind::read_inc:
                append(out, row, es);
                ops_.add(row, m.operand.data());
                break;
        }
    }
    return out;
}

void message_path::on_request(int source, const message& m) {
    std::lock_guard l(m_);
    if (stopped_) return;
    if (m.block < 0 || m.block >= dist_.blocks() || !well_formed(m, dist_.block_patch(m.block), ops_.bytes)) return;
    auto it = held_.find(m.block);
    if (it == held_.end()) return answer(source, m.seq, answer_status::not_here, -1, {});
    held& h = it->second;
    if (!h.primary) {
        if (h.peer >= 0 && !svc_.dead(h.peer)) return answer(source, m.seq, answer_status::not_primary, h.peer, {});
        promote(h);
    }
    auto& mine = h.done[source];
    mine.erase(mine.begin(), mine.lower_bound(m.low));  // the caller has their answers
    if (m.op == op_kind::get) return answer(source, m.seq, answer_status::ok, me_, apply(h, m));
    if (auto r = mine.find(m.seq); r != mine.end()) {  // asked again
        const bool shadow_lives = h.peer >= 0 && !svc_.dead(h.peer);
        if (!shadow_lives || (!h.copy_unacked && r->second.version <= h.acked)) {
            answer(source, m.seq, answer_status::ok, me_, r->second.result);
        } else if (auto f = h.forwarded.find(r->second.version); f != h.forwarded.end()) {
            svc_.send_array_message(h.peer, uid_, f->second);  // the shadow answers
        }
        // else in a new shadow's copy that is not acknowledged yet: asked again later
        return;
    }
    auto result = apply(h, m);
    const std::uint64_t version = ++h.version;
    mine[m.seq] = {version, result};
    const kill_step k = kill_now(me_);  // a test's crash (kill_hook.hpp)
    if (k == kill_step::before_forward) die(me_, "before_forward");
    if (h.peer < 0 || svc_.dead(h.peer)) return answer(source, m.seq, answer_status::ok, me_, std::move(result));
    message f = m;
    f.what = message_kind::forward;
    f.version = version;
    f.caller = source;
    f.result = std::move(result);
    auto bytes = encode_message(f);
    h.forwarded[version] = bytes;
    std::function<void()> sent;
    if (k == kill_step::after_forward) sent = [me = me_] { die(me, "after_forward"); };
    svc_.send_array_message(h.peer, uid_, std::move(bytes), std::move(sent));
}

void message_path::apply_forward(held& h, const message& m) {
    apply(h, m);
    h.version = m.version;
    auto& theirs = h.done[m.caller];
    theirs.erase(theirs.begin(), theirs.lower_bound(m.low));
    theirs[m.seq] = {m.version, m.result};
    if (kill_now(h.peer) == kill_step::before_answer) die(me_, "before_answer");
    answer(m.caller, m.seq, answer_status::ok, h.peer, m.result);
}

void message_path::on_forward(int source, const message& m) {
    std::lock_guard l(m_);
    if (stopped_ || m.caller < 0 || m.caller >= svc_.size()) return;
    auto it = held_.find(m.block);
    if (it == held_.end() || it->second.primary || it->second.peer != source) return;  // not (or no longer) its shadow
    held& h = it->second;
    if (!well_formed(m, dist_.block_patch(m.block), ops_.bytes) || m.op == op_kind::get) return;
    if (m.version <= h.version) {  // sent again: answer again
        auto& theirs = h.done[m.caller];
        auto r = theirs.find(m.seq);
        answer(m.caller, m.seq, answer_status::ok, source, r != theirs.end() ? r->second.result : m.result);
    } else if (m.version > h.version + 1) {
        if (m.version - h.version <= max_early) h.early[m.version] = m;  // one before was dropped: it comes again
        return;
    } else {
        apply_forward(h, m);
        for (auto e = h.early.begin(); e != h.early.end() && e->first <= h.version + 1; e = h.early.erase(e))
            if (e->first == h.version + 1) apply_forward(h, e->second);
    }
    acknowledge(source, m.block, h.version);
}

void message_path::on_ack(int source, const message& m) {
    std::lock_guard l(m_);
    auto it = held_.find(m.block);
    if (stopped_ || it == held_.end() || !it->second.primary || it->second.peer != source) return;
    held& h = it->second;
    h.acked = std::max(h.acked, m.version);
    h.forwarded.erase(h.forwarded.begin(), h.forwarded.upper_bound(h.acked));
    if (h.copy_unacked && m.version >= h.copy_version) h.copy_unacked = false;
}

// A new shadow: the whole copy and the results kept for callers, so that
// an operation asked again after the primary's death is not applied twice.
void message_path::send_copy(int b, held& h) {
    message c;
    c.what = message_kind::copy;
    c.uid = uid_;
    c.block = b;
    c.version = h.version;
    c.data = h.bytes;
    for (const auto& [caller, ops] : h.done)
        for (const auto& [seq, r] : ops) {
            const auto n = static_cast<std::uint32_t>(r.result.size());
            append(c.records, &caller, sizeof caller);
            append(c.records, &seq, sizeof seq);
            append(c.records, &r.version, sizeof r.version);
            append(c.records, &n, sizeof n);
            append(c.records, r.result.data(), n);
        }
    h.copy_unacked = true;
    h.copy_version = h.version;
    send(h.peer, c);
}

void message_path::on_copy(int source, const message& m) {
    std::lock_guard l(m_);
    if (stopped_ || m.block < 0 || m.block >= dist_.blocks()) return;
    const auto bytes = static_cast<std::size_t>(dist_.block_patch(m.block).elements()) * ops_.bytes;
    if (m.data.size() != bytes) return;
    std::map<int, std::map<std::uint64_t, record>> done;
    for (std::size_t at = 0; at < m.records.size();) {
        int caller = 0;
        std::uint64_t seq = 0;
        record r;
        std::uint32_t n = 0;
        if (!take(m.records, at, caller) || !take(m.records, at, seq) || !take(m.records, at, r.version) ||
            !take(m.records, at, n) || m.records.size() - at < n)
            return;  // malformed: dropped
        r.result.assign(m.records.begin() + static_cast<std::ptrdiff_t>(at),
                        m.records.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
        done[caller][seq] = std::move(r);
    }
    held& h = held_[m.block];
    if (h.primary && !h.bytes.empty()) return;  // it holds the primary itself: a stale copy
    if (!h.bytes.empty() && h.peer == source && m.version < h.version) return;  // an older copy, sent again
    h = held{};
    h.peer = source;
    h.bytes = m.data;
    h.version = m.version;
    h.done = std::move(done);
    acknowledge(source, m.block, h.version);
}

void message_path::on_locate(int source, const message& m) {
    message a;
    a.what = message_kind::located;
    a.uid = uid_;
    a.seq = m.seq;
    {
        std::lock_guard l(m_);
        if (auto it = held_.find(m.block); it != held_.end() && !stopped_) {
            a.status = it->second.primary ? 1 : 2;
            a.hint = it->second.peer;
        }
    }
    if (source == me_) return on_answer(a);
    send(source, a);
}

void message_path::on_compare(int source, const message& m) {
    std::vector<char> copy;
    answer_status st = answer_status::not_here;
    {
        std::lock_guard l(m_);
        if (auto it = held_.find(m.block); it != held_.end()) {
            copy = it->second.bytes;
            st = answer_status::ok;
        }
    }
    answer(source, m.seq, st, me_, std::move(copy));
}

void message_path::promote(held& h) {
    h.primary = true;
    h.peer = -1;
    h.early.clear();
    h.forwarded.clear();
    h.acked = h.version;
    h.copy_unacked = false;
    ++counts_.promotions;
}

// Under m_: a shadow whose primary died becomes the primary; a dead
// shadow is dropped.
void message_path::settle_locked() {
    for (auto& [b, h] : held_) {
        const bool peer_dead = h.peer >= 0 && svc_.dead(h.peer);
        if (!h.primary && peer_dead) promote(h);
        if (h.primary && peer_dead) {
            h.peer = -1;
            h.forwarded.clear();
            h.copy_unacked = false;
        }
    }
}

// Under m_: a primary without a shadow sends its copy to a new one.
void message_path::new_shadows_locked() {
    if (!shadows_) return;
    const auto alive = svc_.alive();
    for (auto& [b, h] : held_) {
        if (!h.primary || h.peer >= 0) continue;
        h.peer = shadow_host(me_, svc_.nodes(), alive);
        if (h.peer < 0) continue;
        h.acked = 0;  // the new shadow holds nothing yet
        h.forwarded.clear();
        send_copy(b, h);
        ++counts_.reshadowed;
    }
}

void message_path::after_recovery() {
    std::lock_guard l(m_);
    if (stopped_) return;
    settle_locked();
    for (auto& [b, h] : held_) {  // what the recovery may have dropped
        if (!h.primary || h.peer < 0) continue;
        if (h.copy_unacked) {
            send_copy(b, h);
        } else {
            for (const auto& [v, bytes] : h.forwarded) svc_.send_array_message(h.peer, uid_, bytes);
        }
    }
    new_shadows_locked();
}

// This rank's primaries first (each new shadow acknowledged its copy),
// then every block, as the other holders tell.
void message_path::reshadow() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (bool mine_done = false;;) {
        {
            std::lock_guard l(m_);
            if (stopped_) return;
            settle_locked();
            new_shadows_locked();
            mine_done = std::none_of(held_.begin(), held_.end(), [](const auto& bh) {
                return bh.second.primary && bh.second.peer >= 0 && bh.second.copy_unacked;
            });
        }
        if (mine_done && every_block_shadowed()) return;
        if (std::chrono::steady_clock::now() > deadline)
            throw rampart::error("rampart::pgas: array '" + name_ + "': re-shadowing did not end within 60 s");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

array_counters message_path::counters() const {
    std::lock_guard l(m_);
    return counts_;
}

void message_path::stop() {
    std::lock_guard l(m_);
    if (stopped_) return;
    stopped_ = true;
    held_.clear();
    svc_.busy_for_operations(-1);
}

}  // namespace rampart::pgas::detail
