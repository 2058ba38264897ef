// How a collective operation ends alike on every rank, and how a submit
// commits (docs/store.md, "How a submit commits"):
//
// 1. each rank puts its copies and waits for every ack, then tells every rank
//    "stored" (a done with the ids it submitted and the total it declared);
// 2. a rank that knows every rank's part (its stored, or, for a rank that
//    died, what the recovery states of the survivors say of it) decides with
//    check_parts; to commit it tells every rank "ready" and returns only
//    once every living rank is ready, so that every survivor knows every
//    part already when any rank has returned the version.
//
// Every rank decides from the same parts: a living rank's part comes from
// that rank; a dead rank's part is what the survivors' recovery states held
// in the recovery that reported it dead (an allgather, the same on every
// process), and nothing it sent is taken after that.

#include <rampart/store/detail/kill_hook.hpp>

#include "store_impl.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>

namespace rampart::store {

using detail::head;
using detail::kind;

// --- the test hook -----------------------------------------------------------

namespace {
enum kill_step : int {
    no_kill,
    kill_begin,
    kill_puts,
    kill_stored_partial,
    kill_stored,
    kill_ready_partial,
    kill_ready
};
constexpr const char* kill_step_names[] = {"", "begin", "puts", "stored_partial", "stored", "ready_partial", "ready"};
std::atomic<int> kill_step_set{no_kill};
std::atomic<std::uint64_t> kill_version{0};
}  // namespace

void detail::kill_during_submit(const std::string& step, std::uint64_t version) {
    for (int s = kill_begin; s <= kill_ready; ++s)
        if (step == kill_step_names[s]) {
            kill_version = version;
            kill_step_set = s;
            return;
        }
    throw rampart::invalid_argument("rampart::store::detail::kill_during_submit: no step \"" + step + "\"");
}

// Dies at `step` if the hook asks for it, once what it sent has left.
void store::impl::die_if_due(std::unique_lock<std::mutex>& l, int step) {
    if (kill_step_set.load() != step || kill_version.load() != op_version_) return;
    cv_.wait(l, [&] { return in_flight_ == 0; });
    std::printf("rank %d: dies at step %s of its submit of version %llu\n", me_, kill_step_names[step],
                static_cast<unsigned long long>(op_version_));
    std::fflush(stdout);
    std::raise(SIGKILL);
}

// The rank a partial step of the hook sends to, else -1.
int store::impl::partial_to(int step) const {
    if (kill_step_set.load() != step || kill_version.load() != op_version_) return -1;
    for (int q = 0; q < p_; ++q)
        if (q != me_ && !excused(q)) return q;
    return -1;
}

// --- the rule --------------------------------------------------------------

std::vector<id_range> detail::merged(std::vector<id_range> rs) {
    std::sort(rs.begin(), rs.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<id_range> out;
    for (auto& r : rs) {
        if (!out.empty() && out.back().first + out.back().count == r.first)
            out.back().count += r.count;
        else
            out.push_back(r);
    }
    return out;
}

namespace {
using detail::range_text;

// The first ids in [0, total) that no rank submitted, and the first that two
// ranks did.
std::pair<std::string, std::string> coverage_problem(const std::vector<detail::part>& parts, std::uint64_t total) {
    struct run {
        id_range ids;
        int rank;
    };
    std::vector<run> all;
    for (std::size_t q = 0; q < parts.size(); ++q)
        if (parts[q].known)
            for (const id_range& r : parts[q].ids) all.push_back({r, static_cast<int>(q)});
    std::sort(all.begin(), all.end(), [](const run& a, const run& b) {
        return a.ids.first != b.ids.first ? a.ids.first < b.ids.first : a.rank < b.rank;
    });
    std::string gap, overlap;
    std::uint64_t next = 0;  // ids below are covered; the rank whose run reaches furthest covers next - 1
    int reaching = -1;
    for (const run& r : all) {
        const std::uint64_t end = r.ids.first + r.ids.count;
        if (r.ids.first > next && gap.empty())
            gap = "ids " + range_text(next, r.ids.first) + " were submitted by no rank";
        if (r.ids.first < next && overlap.empty())
            overlap = "ids " + range_text(r.ids.first, std::min(next, end)) + " were submitted by ranks " +
                      std::to_string(reaching) + " and " + std::to_string(r.rank);
        if (end > next) {
            next = end;
            reaching = r.rank;
        }
    }
    if (next < total && gap.empty()) gap = "ids " + range_text(next, total) + " were submitted by no rank";
    return {gap, overlap};
}
}  // namespace

detail::parts_problem detail::check_parts(const std::vector<part>& parts, const std::vector<int>& without_part) {
    int first = -1;
    for (std::size_t q = 0; q < parts.size(); ++q) {
        if (!parts[q].known) continue;
        if (parts[q].flags & part_invalid) return {"rank " + std::to_string(q) + " passed invalid arguments"};
        if (first < 0) {
            first = static_cast<int>(q);
        } else if (parts[q].total != parts[static_cast<std::size_t>(first)].total) {
            return {"ranks disagree on the number of blocks (rank " + std::to_string(first) + ": " +
                    std::to_string(parts[static_cast<std::size_t>(first)].total) + ", rank " + std::to_string(q) +
                    ": " + std::to_string(parts[q].total) + ")"};
        }
    }
    if (first < 0) return {"no rank gave a part", true};
    auto [gap, overlap] = coverage_problem(parts, parts[static_cast<std::size_t>(first)].total);
    const bool by_failures = !gap.empty() && overlap.empty() && !without_part.empty();
    if (!gap.empty() && !without_part.empty()) {
        gap += " (no part from failed ranks";
        for (std::size_t i = 0; i < without_part.size(); ++i)
            gap += (i ? ", " : " ") + std::to_string(without_part[i]);
        gap += ")";
    }
    return {gap.empty() ? overlap : overlap.empty() ? gap : gap + "; " + overlap, by_failures};
}

// --- parts in recovery states ----------------------------------------------
// Per operation with known parts: op, count, then per known part: rank,
// total, flags, number of ranges, the ranges (all 64-bit).

void detail::encode_records(const std::map<std::uint64_t, op_record>& records, std::vector<char>& out) {
    std::vector<std::uint64_t> w;
    for (const auto& [op, rec] : records) {
        const std::size_t at = w.size();
        w.insert(w.end(), {op, 0});
        for (std::size_t q = 0; q < rec.parts.size(); ++q) {
            const part& pt = rec.parts[q];
            if (!pt.known) continue;
            ++w[at + 1];
            w.insert(w.end(), {q, pt.total, pt.flags, pt.ids.size()});
            for (const id_range& r : pt.ids) w.insert(w.end(), {r.first, r.count});
        }
        if (w[at + 1] == 0) w.resize(at);
    }
    const std::size_t at = out.size();
    out.resize(at + w.size() * sizeof(std::uint64_t));
    if (!w.empty()) std::memcpy(out.data() + at, w.data(), w.size() * sizeof(std::uint64_t));
}

std::optional<std::map<std::uint64_t, detail::op_record>> detail::decode_records(const char* bytes, std::size_t size,
                                                                                 int ranks) {
    if (size % sizeof(std::uint64_t) != 0) return std::nullopt;
    std::vector<std::uint64_t> w(size / sizeof(std::uint64_t));
    if (size) std::memcpy(w.data(), bytes, size);
    std::map<std::uint64_t, op_record> out;
    std::size_t i = 0;
    const auto left = [&] { return w.size() - i; };
    while (i < w.size()) {
        if (left() < 2) return std::nullopt;
        op_record& rec = out[w[i]];
        rec.parts.resize(static_cast<std::size_t>(ranks));
        std::uint64_t n = w[i + 1];
        for (i += 2; n > 0; --n) {
            if (left() < 4 || w[i] >= static_cast<std::uint64_t>(ranks) || w[i + 3] > (left() - 4) / 2)
                return std::nullopt;
            part& pt = rec.parts[static_cast<std::size_t>(w[i])];
            pt.known = true;
            pt.total = w[i + 1];
            pt.flags = w[i + 2];
            pt.ids.resize(static_cast<std::size_t>(w[i + 3]));
            i += 4;
            for (id_range& r : pt.ids) {
                r = {w[i], w[i + 1]};
                i += 2;
            }
        }
    }
    return out;
}

// --- operations --------------------------------------------------------------

detail::part& store::impl::part_of(std::uint64_t op, int q) {
    auto& parts = ops_[op].parts;
    parts.resize(static_cast<std::size_t>(p_));
    return parts[static_cast<std::size_t>(q)];
}

bool store::impl::everyone_done() const {
    auto it = ops_.find(op_);
    for (int q = 0; q < p_; ++q)
        if (!excused(q) && (it == ops_.end() || !it->second.parts[static_cast<std::size_t>(q)].known)) return false;
    return true;
}

bool store::impl::everyone_ready() const {
    auto it = ops_.find(op_);
    for (int q = 0; q < p_; ++q)
        if (!excused(q) && (it == ops_.end() || !it->second.parts[static_cast<std::size_t>(q)].ready)) return false;
    return true;
}

void store::impl::begin_op(std::uint64_t version) {
    ++op_;
    last_tag_ = next_tag_;
    next_tag_ = 0;
    op_version_ = version;
    in_op_ = true;
    sent_ = {op_, {}, {}};
    lost_ids_.clear();
    busy(1);
}

void store::impl::end_op() {
    if (deciding_) {
        ops_.erase(decided_submit_);
        decided_submit_ = op_;
        deciding_ = false;
    }
    // Records of this and earlier operations go, but for the last submit's
    // (a rank that has not decided it yet may need them at a recovery).
    for (auto it = ops_.begin(); it != ops_.end() && it->first <= op_;)
        it = it->first == decided_submit_ ? std::next(it) : ops_.erase(it);
    sent_before_ = std::move(sent_);
    sent_ = {};
    in_op_ = false;
    ended_op_ = op_;
    tell_replacements();
    busy(-1);
}

// To every rank that takes part in `op` (or to `only_to` alone).
void store::impl::send_word(std::uint64_t op, const std::vector<char>& bytes, int only_to) {
    std::weak_ptr<impl> self = weak_from_this();
    for (int q = 0; q < p_; ++q) {
        if (q == me_ || dead_in(op, q) || (only_to >= 0 && q != only_to)) continue;
        send(
            q, bytes, {},
            [self](bool) {
                if (auto s = self.lock()) {
                    std::lock_guard l(s->m_);
                    --s->in_flight_;
                    s->cv_.notify_all();
                }
            },
            epoch());
        ++in_flight_;
    }
}

void store::impl::send_done(std::uint64_t total, std::uint64_t flags, std::vector<id_range> ids, int only_to) {
    head h;
    h.what = kind::done;
    h.op = op_;
    h.total = total;
    h.request = flags;
    sent_.done = detail::encode(h, ids);
    detail::part& mine = part_of(op_, me_);
    mine.known = true;
    mine.total = total;
    mine.flags = flags;
    mine.ids = std::move(ids);
    send_word(op_, sent_.done, only_to);
}

void store::impl::send_ready(int only_to) {
    head h;
    h.what = kind::ready;
    h.op = op_;
    sent_.ready = detail::encode(h);
    part_of(op_, me_).ready = true;
    send_word(op_, sent_.ready, only_to);
}

// What this rank sent of the current and of the last operation may have
// been lost with the old communicator.
void store::impl::resend_words() {
    for (const sent_words* w : {&sent_before_, &sent_}) {
        if (!w->done.empty()) send_word(w->op, w->done);
        if (!w->ready.empty()) send_word(w->op, w->ready);
    }
}

void store::impl::on_done(int source, const detail::decoded& d) {
    if (dead_in(d.h.op, source)) return;  // decided from the recovery states alone
    detail::part& pt = part_of(d.h.op, source);
    if (pt.known) return;
    pt.known = true;
    pt.total = d.h.total;
    pt.flags = d.h.request;
    pt.ids = d.ranges;
}

void store::impl::on_ready(int source, const head& h) {
    if (!dead_in(h.op, source)) part_of(h.op, source).ready = true;
}

// In a recovery: the parts of the ranks reported dead are those that some
// survivor's state holds, the same on every survivor; what a dead rank sent
// is not taken after this. A replaced rank's new process does the
// operations after absent_until_ again, so its old process's parts of those go.
void store::impl::learn_parts(const std::vector<int>& replaced, const std::vector<int>& lost,
                              const std::vector<std::vector<char>>& states) {
    std::vector<char> dead(static_cast<std::size_t>(p_), 0);
    for (int q : lost) dead[static_cast<std::size_t>(q)] = 1;
    for (int q : replaced) dead[static_cast<std::size_t>(q)] = 1;
    for (int q : replaced)
        for (auto& [op, rec] : ops_)
            if (!dead_in(op, q) && rec.parts.size() > static_cast<std::size_t>(q))
                rec.parts[static_cast<std::size_t>(q)] = {};
    for (std::size_t s = 0; s < states.size() && s < dead.size(); ++s) {
        if (dead[s] || lost_[s] || states[s].size() < sizeof(detail::recovery_facts)) continue;
        const std::size_t skip = sizeof(detail::recovery_facts);
        const auto records = detail::decode_records(states[s].data() + skip, states[s].size() - skip, p_);
        if (!records) {
            ++counters_.malformed;
            continue;
        }
        for (const auto& [op, rec] : *records)
            for (int q = 0; q < p_; ++q) {
                const detail::part& theirs = rec.parts[static_cast<std::size_t>(q)];
                if (!dead[static_cast<std::size_t>(q)] || !theirs.known || !dead_in(op, q)) continue;
                if (detail::part& mine = part_of(op, q); !mine.known) mine = theirs;
            }
    }
}

// --- submit ----------------------------------------------------------------

namespace {
// "" when the runs are whole blocks inside [0, total) and disjoint; `mine`
// gets their ids.
std::string check_runs(std::span<const block_run> runs, std::uint64_t total, std::size_t block_bytes,
                       std::vector<id_range>& mine) {
    for (const block_run& run : runs) {
        if (run.bytes.size() % block_bytes != 0)
            return std::to_string(run.bytes.size()) + " bytes at block " + std::to_string(run.first_id) +
                   " are not a whole number of " + std::to_string(block_bytes) + "-byte blocks";
        if (!run.bytes.empty()) mine.push_back({run.first_id, run.bytes.size() / block_bytes});
    }
    if (total == 0) return "a version of 0 blocks";
    return detail::check_ranges(mine, total);
}
}  // namespace

// Sends the copies of this rank's blocks to their holders (keeping its own).
void store::impl::put_own_blocks(std::span<const block_run> runs, std::uint64_t v, std::uint64_t total) {
    // Replaces the placement of an abandoned attempt at this version;
    // held_[v] stays, as copies from faster ranks may be in it already.
    placements_.erase(v);
    const placement& where = placements_.emplace(v, place(total)).first->second;
    std::map<int, std::vector<put_draft>> puts;
    auto local = std::make_shared<std::vector<char>>();
    std::vector<id_range> local_ids;
    for (const block_run& run : runs) {
        if (run.bytes.empty()) continue;
        for (const placement_unit& u : where.units(run.first_id, run.bytes.size() / block_bytes_)) {
            const std::byte* at = run.bytes.data() + (u.first_id - run.first_id) * block_bytes_;
            for (const int h : targets(where, u.first_holder, lost_)) {
                if (h == me_) {
                    local->insert(local->end(), reinterpret_cast<const char*>(at),
                                  reinterpret_cast<const char*>(at) + u.count * block_bytes_);
                    local_ids.push_back({u.first_id, u.count});
                    continue;
                }
                for (std::uint64_t done = 0; done < u.count; done += max_message_blocks()) {
                    const std::uint64_t n = std::min(max_message_blocks(), u.count - done);
                    add_put(puts, h, {u.first_id + done, n}, {{at + done * block_bytes_, n * block_bytes_}}, {});
                }
            }
        }
    }
    hold(v, op_, local_ids, std::move(local), 0);
    send_puts(puts, op_, v, total, outstanding_);
}

std::uint64_t store::impl::submit(std::span<const block_run> runs, std::uint64_t total) {
    std::vector<id_range> mine;
    const std::string invalid = check_runs(runs, total, block_bytes_, mine);
    std::unique_lock l(m_);
    await_outcome(l);
    const std::uint64_t v = committed_ + 1;
    begin_op(v);
    deciding_ = true;
    die_if_due(l, kill_begin);
    if (invalid.empty()) put_own_blocks(runs, v, total);
    die_if_due(l, kill_puts);
    cv_.wait(l, [&] { return outstanding_.empty() && in_flight_ == 0; });
    // Phase 1: every copy this rank sent is held.
    if (!invalid.empty()) mine.clear();
    send_done(total, invalid.empty() ? 0 : detail::part_invalid, detail::merged(mine), partial_to(kill_stored_partial));
    die_if_due(l, kill_stored_partial);
    die_if_due(l, kill_stored);
    cv_.wait(l, [&] { return everyone_done() && in_flight_ == 0; });
    std::vector<int> without_part;
    for (int q = 0; q < p_; ++q)
        if (!part_of(op_, q).known) without_part.push_back(q);  // dead, and no survivor has its part
    const auto [problem, by_failures] = detail::check_parts(ops_[op_].parts, without_part);
    if (problem.empty()) {
        // Phase 2: every survivor can decide alike now; returns once all can.
        send_ready(partial_to(kill_ready_partial));
        die_if_due(l, kill_ready_partial);
        die_if_due(l, kill_ready);
        cv_.wait(l, [&] { return everyone_ready() && in_flight_ == 0; });
    }
    settle(v, problem.empty());
    end_op();
    if (!invalid.empty()) throw rampart::invalid_argument("rampart::store::submit: " + invalid);
    if (!problem.empty())
        throw store_error("rampart::store::submit: version " + std::to_string(v) + " is abandoned, version " +
                              std::to_string(committed_) + " stays: " + problem,
                          {}, by_failures);
    return v;
}

// Keeps version v and drops the older ones, or drops what this submit put of v.
void store::impl::settle(std::uint64_t v, bool complete) {
    if (complete) {
        committed_ = v;
        held_.erase(held_.begin(), held_.lower_bound(v));
        placements_.erase(placements_.begin(), placements_.lower_bound(v));
        abandoned_.erase(abandoned_.begin(), abandoned_.lower_bound(v));
        return;
    }
    // Blocks that a faster rank's next attempt at v put here already stay.
    if (auto it = held_.find(v); it != held_.end()) {
        std::erase_if(it->second, [&](const auto& kv) { return kv.second.op <= op_; });
        if (it->second.empty()) held_.erase(it);
    }
    placements_.erase(v);
    abandoned_[v] = op_;
}

}  // namespace rampart::store
