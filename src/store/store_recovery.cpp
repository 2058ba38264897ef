// Recoveries: what a store tells the others when ranks die, how survivors
// ask again and repair the replication level, and how a replacement joins.

#include "store_impl.hpp"

namespace rampart::store {

using comm::segment;
using detail::head;
using detail::kind;
using detail::max_message_bytes;

std::uint64_t store::impl::repair(const std::function<bool(int, int)>& lacks) {
    auto where_it = placements_.find(committed_);
    if (where_it == placements_.end()) return 0;
    const placement& where = where_it->second;
    std::map<int, std::vector<put_draft>> puts;
    std::uint64_t sent = 0;
    for (const placement_unit& u : where.units(0, where.blocks())) {
        std::vector<int> t;
        std::vector<char> needs;
        int sender = -1;
        for (int k = 0; k < r_; ++k) {
            const int original = where.holder_of_copy(u.first_holder, k);
            const int h = resolve(original, lost_);
            if (std::find(t.begin(), t.end(), h) != t.end()) continue;
            t.push_back(h);
            needs.push_back(lacks(h, original));
            if (!needs.back() && sender < 0) sender = h;
        }
        if (sender != me_) continue;  // the first holder with a sure copy sends, the same on every rank
        for (std::uint64_t done = 0; done < u.count; done += max_message_blocks()) {
            const id_range chunk{u.first_id + done, std::min(max_message_blocks(), u.count - done)};
            std::vector<std::shared_ptr<const std::vector<char>>> keep;
            auto segs = find(committed_, {chunk}, keep);
            if (!segs) continue;  // not here after all: this copy stays missing
            for (std::size_t k = 0; k < t.size(); ++k) {
                if (!needs[k] || t[k] == me_) continue;
                add_put(puts, t[k], chunk, *segs, keep);
                sent += chunk.count;
            }
        }
    }
    send_puts(puts, 0, committed_, where.blocks(), repairs_);  // a repair is no collective operation
    counters_.blocks_repaired += sent;
    return sent;
}

// A rank whose process makes this store only after the recovery of `states`
// and so joins after the last operation begun there (join()): one that has
// been replaced and had no store at the recovery.
bool store::impl::joins_late(const std::vector<std::vector<char>>& states, int q) const {
    const auto at = static_cast<std::size_t>(q);
    return (at >= states.size() || !detail::read_facts(states[at])) && incarnation_of(q) > 0;
}

void store::impl::on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                              const std::vector<std::vector<char>>& states) {
    std::lock_guard l(m_);
    // The last operation any survivor had begun: replacements join after it.
    std::uint64_t begun = 0;
    for (const auto& st : states)
        if (auto f = detail::read_facts(st)) begun = std::max(begun, f->op);
    // A new process, or one that replaced its rank earlier and has not made
    // the store yet, takes no part in the operations up to `begun`, and is
    // told (again: words in flight died with the old communicator) what the
    // operation it joined after ended with. A rank's first process without
    // the store takes part from the first operation, as it will.
    for (auto& [q, j] : replacements_) j.told = false;
    for (int q = 0; q < p_; ++q) {
        const auto at = static_cast<std::size_t>(q);
        if (q == me_ || lost_[at] || std::find(lost.begin(), lost.end(), q) != lost.end()) continue;
        const bool is_new = std::find(replaced.begin(), replaced.end(), q) != replaced.end();
        if (!is_new && !joins_late(states, q)) continue;
        absent_until_[at] = std::max(absent_until_[at], begun);
        holds_from_[at] = std::max(committed_, op_version_) + 1;  // it holds nothing of the versions there are now
        replacements_[q] = joined{begun, false};
    }
    const std::vector<char> lost_before = lost_;
    for (int q : lost) lost_[static_cast<std::size_t>(q)] = 1;
    learn_parts(replaced, lost, states);
    // Messages in flight died with the old communicator: ask again, other
    // holders where the one asked is gone.
    std::vector<wanted> again;
    std::vector<std::uint64_t> resend;
    for (auto* requests : {&outstanding_, &repairs_}) {
        for (auto it = requests->begin(); it != requests->end();) {
            const int dest = it->second.dest;
            if (!lost_[static_cast<std::size_t>(dest)] &&
                std::find(replaced.begin(), replaced.end(), dest) == replaced.end()) {
                resend.push_back(it->first);
                ++it;
                continue;
            }
            if (it->second.what == kind::get) ask_elsewhere(it->second, again);
            it = requests->erase(it);  // a put to a dead or new process: that copy is missing until a repair
        }
    }
    for (std::uint64_t id : resend) send_request(id);
    if (!again.empty()) route(std::move(again));
    resend_words();
    // Restore the replication level of the newest version (paper IV-E): the
    // replaced ranks, and the ranks that hold in place of the newly lost
    // ones, get the copies they lack from the first holder that has them.
    repair([&](int target, int original) {
        if (std::find(replaced.begin(), replaced.end(), target) != replaced.end()) return true;
        return resolve(original, lost_before) != target;
    });
    // A replacement whose every possible teller (a rank that had the store
    // when it joined) is gone keeps the version it joined with: no process
    // left knows another.
    if (awaiting_outcome_) {
        bool teller_left = false;
        for (int q = 0; q < p_; ++q)
            teller_left |= tellers_[static_cast<std::size_t>(q)] && !lost_[static_cast<std::size_t>(q)] &&
                           std::find(replaced.begin(), replaced.end(), q) == replaced.end();
        if (!teller_left) stop_awaiting();
    }
    tell_replacements();
    cv_.notify_all();
}

// What a survivor's store tells the others, and a replacement's, at a
// recovery: the last operation it has begun (and its tag), the newest
// complete version, and the parts it knows of operations. All then agree,
// from the same facts, that a replaced rank's new process joins after the
// latest operation begun anywhere, and on the parts of the dead ranks.
std::vector<char> store::impl::recovery_state() {
    std::lock_guard l(m_);
    if (closed_) return {};
    auto it = placements_.find(committed_);
    const detail::recovery_facts f{op_,
                                   last_tag_,
                                   committed_,
                                   it == placements_.end() ? 0 : it->second.blocks(),
                                   joined_op_,
                                   holds_from_[static_cast<std::size_t>(me_)],
                                   op_version_};
    std::vector<char> out(sizeof f);
    std::memcpy(out.data(), &f, sizeof f);
    detail::encode_records(ops_, out);  // what it knows of each rank's part of its open operations
    return out;
}

// A store made after a recovery in which others had theirs. What they know of
// each rank comes with their facts: a process that joined after an
// operation takes no part in it (nor does one that replaced its rank and has
// no store yet: it joins after the last operation begun, as this one does),
// and the versions it surely holds. A rank's first process takes part from
// the first operation, as its program does. A new process carries on after
// the operations the survivors have begun, from the newest version complete
// at the recovery. It never waits for the survivors: an operation under way
// may need this rank's program to go on before it can end. (A version
// completed after the recovery, by an operation this rank did not take part
// in, is newer than the one it knows; checkpoints keep their logs two deep
// for that.)
void store::impl::join(const std::vector<std::vector<char>>& states) {
    std::lock_guard l(m_);
    std::optional<detail::recovery_facts> newest;
    std::uint64_t begun = 0, begun_tag = 0, holds_nothing_before = 1;  // the survivors' rule in on_recovery
    tellers_.assign(static_cast<std::size_t>(p_), 0);
    for (std::size_t q = 0; q < states.size() && q < tellers_.size(); ++q) {
        const auto f = static_cast<int>(q) == me_ ? std::nullopt : detail::read_facts(states[q]);
        if (!f) continue;
        tellers_[q] = 1;
        if (f->op > begun) {
            begun = f->op;
            begun_tag = f->tag;
        }
        holds_nothing_before = std::max(holds_nothing_before, std::max(f->committed, f->op_version) + 1);
        absent_until_[q] = f->joined_after;
        holds_from_[q] = f->holds_from;
        if (!newest || f->committed > newest->committed) newest = f;
    }
    if (!newest) return;  // the others have no such store (yet): nothing to join
    for (int q = 0; q < p_ && q < static_cast<int>(states.size()); ++q)
        if (q != me_ && joins_late(states, q)) {
            absent_until_[static_cast<std::size_t>(q)] = begun;
            holds_from_[static_cast<std::size_t>(q)] = holds_nothing_before;
        }
    if (recovery::incarnation() == 0) return;
    if (begun > op_) {
        // This process now stands after that operation as if it had begun
        // it: its recovery state must name the operation's tag with its
        // number, or a later replacement that reads this state first would
        // take part in that operation again.
        op_ = begun;
        joined_after_tag_ = last_tag_ = begun_tag;
    }
    replacement_ = true;
    committed_ = newest->committed;
    if (committed_ > 0) placements_.emplace(committed_, place(newest->blocks));
    holds_from_[static_cast<std::size_t>(me_)] = holds_nothing_before;  // copies reach it by the repair, if at all
    awaiting_outcome_ = true;
    joined_op_ = op_;
    learn_outcome();  // told already, before this store was made
}

// The operation a replacement joined after may be a submit that the
// survivors commit after the recovery: their version is then newer than the
// one their recovery states named. Each survivor, once it has ended that
// operation, says which version it has; the replacement waits for that word
// before its first collective operation, so that every rank numbers it alike
// (and never earlier: the survivors may need its program to go on before
// they reach that operation).
void store::impl::on_outcome(const head& h) {
    if (h.version > 0 && h.total == 0) {
        ++counters_.malformed;
        return;
    }
    if (!outcome_ || h.op > outcome_->op) outcome_ = h;
    learn_outcome();
}

// Older versions stay until the next commit: a fetch of the checkpoint this
// process restores from may still route by the older placement.
void store::impl::learn_outcome() {
    if (!awaiting_outcome_ || !outcome_ || outcome_->op < joined_op_) return;
    if (const std::uint64_t v = outcome_->version; v > committed_) {
        committed_ = v;
        placements_.emplace(v, place(outcome_->total));
        holds_from_[static_cast<std::size_t>(me_)] = v + 1;
        ++counters_.versions_learnt;
    }
    stop_awaiting();
}

// The operations up to joined_op_ have ended for this process too. What a
// submit among them that was abandoned put here goes, as on the survivors.
void store::impl::stop_awaiting() {
    awaiting_outcome_ = false;
    ended_op_ = std::max(ended_op_, joined_op_);
    const std::uint64_t next = committed_ + 1;
    if (auto it = held_.find(next); it != held_.end()) {
        std::erase_if(it->second, [&](const auto& kv) { return kv.second.op != 0 && kv.second.op <= joined_op_; });
        if (it->second.empty()) held_.erase(it);
    }
    if (joined_op_ > 0) abandoned_[next] = std::max(abandoned_[next], joined_op_);
    tell_replacements();
    cv_.notify_all();
}

// To each new process not told yet whose operation has ended here.
void store::impl::tell_replacements() {
    if (awaiting_outcome_ || closed_) return;  // what this process would say may be stale, or nothing
    auto it = placements_.find(committed_);
    head h;
    h.what = kind::outcome;
    h.op = ended_op_;
    h.version = committed_;
    h.total = it == placements_.end() ? 0 : it->second.blocks();
    for (auto& [q, j] : replacements_) {
        if (j.told || lost_[static_cast<std::size_t>(q)] || ended_op_ < j.after) continue;
        j.told = true;
        send(
            q, detail::encode(h), {}, [](bool) {}, epoch());
    }
}

std::uint64_t store::impl::restore_replication() {
    std::unique_lock l(m_);
    await_outcome(l);
    begin_op(committed_);
    const std::uint64_t version = committed_;
    const std::uint64_t sent = repair([&](int target, int original) {
        return target != original || holds_from_[static_cast<std::size_t>(target)] > version;
    });
    cv_.wait(l, [&] { return repairs_.empty() && in_flight_ == 0; });
    send_done();
    cv_.wait(l, [&] { return everyone_done() && in_flight_ == 0; });
    // Every rank's repairs are held now: replaced ranks surely hold this version.
    for (std::size_t q = 0; q < holds_from_.size(); ++q)
        if (!dead_in(op_, static_cast<int>(q))) holds_from_[q] = std::min(holds_from_[q], version);
    end_op();
    return sent;
}

}  // namespace rampart::store
