#pragma once
// The store's state on one rank, shared by store.cpp (sending, loads, the
// engine thread, recoveries) and submit_protocol.cpp (how a submit commits).

#include <rampart/comm/comm.hpp>
#include <rampart/comm/service.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/store.hpp>

#include "submit_protocol.hpp"
#include "wire.hpp"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>

namespace rampart::store {

namespace detail {
// A message of the store carries at most this many bytes of blocks: far
// under MPI's int counts, and small enough to interleave ranks' traffic.
constexpr std::uint64_t max_message_bytes = 64 << 20;

// "[from, to)". Appended piece by piece: GCC 12 warns (-Wrestrict, wrongly)
// about "[" + std::string.
std::string range_text(std::uint64_t from, std::uint64_t to);
std::string ids_text(const std::vector<id_range>& rs);
// "" when the ranges are non-empty, inside [0, n) and disjoint; else why not.
std::string check_ranges(std::vector<id_range> rs, std::uint64_t n);

// What a store tells the others at a recovery (see recovery_state), followed
// by its records of operations (encode_records).
struct recovery_facts {
    std::uint64_t op = 0;         // the last operation begun
    std::uint64_t tag = 0;        // its tag
    std::uint64_t committed = 0;  // the newest complete version
    std::uint64_t blocks = 0;     // its blocks
    std::uint64_t joined_after = 0;  // this process takes no part in operations up to it (0: a first process)
    std::uint64_t holds_from = 0;    // the first version this process surely holds
    std::uint64_t op_version = 0;    // the version its last operation submits or loads
};
std::optional<recovery_facts> read_facts(const std::vector<char>& state);
}  // namespace detail

class store::impl final : public comm::service, public std::enable_shared_from_this<impl> {
public:
    impl(std::size_t block_bytes, options o);

    void start() { attach(); }
    // The store object is gone, but this rank's last messages may still be
    // lost in a recovery that comes later, while other ranks wait for them:
    // the data goes, and what is left keeps answering until the process ends
    // (sends its last done again at a recovery, answers gets with nothing).
    void close() {
        std::unique_lock l(m_);
        cv_.wait(l, [&] { return in_flight_ == 0; });
        held_.clear();
        placements_.clear();
        repairs_.clear();
        closed_ = true;
    }

    std::uint64_t submit(std::span<const block_run> runs, std::uint64_t total);
    void load(std::span<const id_range> ranges, std::vector<char>* vec, std::span<std::byte> into);
    std::vector<char> fetch(std::span<const id_range> ranges);
    std::uint64_t restore_replication();

    void on_message(int source, std::vector<char>&& bytes, std::size_t offset) override;
    void on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                     const std::vector<std::vector<char>>& states) override;
    std::vector<char> recovery_state() override;
    void on_attach(const std::vector<std::vector<char>>& states) override { join(states); }
    void join(const std::vector<std::vector<char>>& states);
    bool joins_late(const std::vector<std::vector<char>>& states, int q) const;
    void tag_next_operation(std::uint64_t tag) {
        std::lock_guard l(m_);
        next_tag_ = tag;
    }
    bool done_without_me(std::uint64_t tag) const {
        std::lock_guard l(m_);
        return replacement_ && tag <= joined_after_tag_;
    }

    std::uint64_t version() const {
        std::lock_guard l(m_);
        return committed_;
    }
    std::uint64_t blocks() const {
        std::lock_guard l(m_);
        auto it = placements_.find(committed_);
        return it == placements_.end() ? 0 : it->second.blocks();
    }
    store_counters counters() const {
        std::lock_guard l(m_);
        store_counters c = counters_;
        for (auto& [v, pieces] : held_)
            for (auto& [first, pc] : pieces) c.bytes_held += pc.count * block_bytes_;
        return c;
    }

    std::size_t block_bytes_;
    options opts_;
    int me_ = 0, p_ = 1, r_ = 1;
    std::uint64_t range_blocks_ = 0;

    placement place(std::uint64_t blocks) const { return placement(blocks, p_, r_, range_blocks_, opts_.seed, order_); }

private:
    using segment = comm::segment;
    using head = detail::head;
    using kind = detail::kind;
    struct piece {
        std::uint64_t count = 0;
        std::shared_ptr<const std::vector<char>> buf;
        std::size_t offset = 0;
        std::uint64_t op = 0;  // the submit that put it here (0: a repair)
    };
    // A part of the caller's load: blocks, where they go in the output, and
    // which holders were asked for them already.
    struct wanted {
        id_range ids;
        std::size_t out = 0;
        std::vector<char> tried;
    };
    struct request {  // a put or get of this rank that waits for its answer
        int dest = 0;
        kind what = kind::put;
        std::vector<char> head;
        std::vector<segment> data;
        std::vector<wanted> parts;                                   // get only
        std::uint64_t bytes = 0;                                     // of the blocks it carries or asks for
        std::vector<std::shared_ptr<const std::vector<char>>> keep;  // held blocks a repair sends from
    };
    // The done and ready this rank sent for an operation, sent again after a
    // recovery (the communicator they went on may have lost them).
    struct sent_words {
        std::uint64_t op = 0;
        std::vector<char> done, ready;
    };

    bool usable(int q, std::uint64_t version) const {
        return !lost_[static_cast<std::size_t>(q)] && holds_from_[static_cast<std::size_t>(q)] <= version;
    }
    // Rank q takes no part in operation `op`: lost, or replaced while some
    // rank was in `op` already (its new process joins after it).
    bool dead_in(std::uint64_t op, int q) const {
        return lost_[static_cast<std::size_t>(q)] || op <= absent_until_[static_cast<std::size_t>(q)];
    }
    bool excused(int q) const { return dead_in(op_, q); }
    // Where copies of a lost rank live once restored (paper IV-E): with the
    // next living rank after it along the node order (mostly one of its own
    // node, which holds no other copy of those blocks), the same choice on
    // every rank.
    int resolve(int h, const std::vector<char>& lost) const {
        const int at = order_.position_of(h);
        for (int i = 0; i < p_; ++i)
            if (const int q = order_.pe_at((at + i) % p_); !lost[static_cast<std::size_t>(q)]) return q;
        return me_;
    }
    // The ranks meant to hold copies of a unit, in copy order, each once.
    std::vector<int> targets(const placement& where, int first_holder, const std::vector<char>& lost) const {
        std::vector<int> t;
        for (int k = 0; k < r_; ++k) {
            const int h = resolve(where.holder_of_copy(first_holder, k), lost);
            if (std::find(t.begin(), t.end(), h) == t.end()) t.push_back(h);
        }
        return t;
    }
    void send_request(std::uint64_t id);
    // Puts being built, per destination: a new one whenever the last would
    // pass max_message_bytes.
    struct put_draft {
        request rq;
        std::vector<id_range> ids;
    };
    std::uint64_t max_message_blocks() const {
        return std::max<std::uint64_t>(1, detail::max_message_bytes / block_bytes_);
    }
    void add_put(std::map<int, std::vector<put_draft>>& puts, int dest, id_range ids, const std::vector<segment>& data,
                 const std::vector<std::shared_ptr<const std::vector<char>>>& keep);
    void send_puts(std::map<int, std::vector<put_draft>>& puts, std::uint64_t op, std::uint64_t version,
                   std::uint64_t total, std::map<std::uint64_t, request>& into);
    void put_own_blocks(std::span<const block_run> runs, std::uint64_t version, std::uint64_t total);
    void hold(std::uint64_t version, std::uint64_t op, const std::vector<id_range>& ids,
              std::shared_ptr<const std::vector<char>> buf, std::size_t offset);
    void on_reply(std::uint64_t id, std::size_t expected, bool ok, std::size_t got);
    // The parts of get `rq` go to `again`, to be asked of another holder.
    void ask_elsewhere(request& rq, std::vector<wanted>& again) {
        for (wanted& w : rq.parts) {
            w.tried[static_cast<std::size_t>(rq.dest)] = 1;
            again.push_back(std::move(w));
        }
        ++counters_.requests_rerouted;
    }
    std::uint64_t bytes_of(std::span<const id_range> ranges) const {
        std::uint64_t bytes = 0;
        for (const id_range& r : ranges) bytes += r.count * block_bytes_;
        return bytes;
    }
    // The commit protocol (submit_protocol.cpp).
    void send_done(std::uint64_t total = 0, std::uint64_t flags = 0, std::vector<id_range> ids = {}, int only_to = -1);
    void send_ready(int only_to);
    void send_word(std::uint64_t op, const std::vector<char>& bytes, int only_to = -1);
    void resend_words();
    void learn_parts(const std::vector<int>& replaced, const std::vector<int>& lost,
                     const std::vector<std::vector<char>>& states);
    void settle(std::uint64_t version, bool complete);
    // The test hook (include/rampart/store/detail/kill_hook.hpp).
    void die_if_due(std::unique_lock<std::mutex>& l, int step);
    int partial_to(int step) const;
    // One handler per kind of message (message_handlers.cpp, submit_protocol.cpp).
    void on_put(int source, const detail::decoded& d, std::vector<char>&& bytes);
    void on_get(int source, const detail::decoded& d);
    void on_ack(int source, const head& h);
    void on_data(int source, const detail::decoded& d, const std::vector<char>& bytes);
    void on_done(int source, const detail::decoded& d);
    void on_ready(int source, const head& h);
    // A replacement's version after the operation it joined after
    // (store_recovery.cpp).
    void on_outcome(const head& h);
    void learn_outcome();
    void stop_awaiting();
    void tell_replacements();
    void await_outcome(std::unique_lock<std::mutex>& l) {
        cv_.wait(l, [&] { return !awaiting_outcome_; });
    }
    void route(std::vector<wanted> parts);
    // The gets being built by one route: (holder, long part) -> its request,
    // the requests in order, the holder asked last.
    struct get_drafts {
        std::map<std::pair<int, bool>, std::uint64_t> open;
        std::vector<std::uint64_t> asked;
        int last = -1;
    };
    std::vector<int> candidates_for(const placement_unit& u, const std::vector<char>& tried) const;
    void route_unit(const placement_unit& u, wanted unit_part, get_drafts& drafts);
    void add_to_get(int holder, wanted part, get_drafts& drafts);
    bool copy_local(const wanted& w);
    void start_loading(std::span<const id_range> ranges, char* out);
    void throw_if_lost(const char* what);
    std::optional<std::vector<segment>> find(std::uint64_t version, const std::vector<id_range>& ranges,
                                             std::vector<std::shared_ptr<const std::vector<char>>>& keep) const;
    detail::part& part_of(std::uint64_t op, int q);
    bool everyone_done() const;            // every rank that takes part has given its part (or is resolved)
    bool everyone_ready() const;           // of a submit: every rank that takes part is ready
    void begin_op(std::uint64_t version);  // a collective operation on `version` starts here
    void end_op();
    // Sends copies of the committed version to the ranks that `lacks` says
    // lack them; returns the blocks sent.
    std::uint64_t repair(const std::function<bool(int target, int original)>& lacks);

    mutable std::mutex m_;
    std::condition_variable cv_;
    std::vector<char> lost_;                 // per logical rank: dead for good
    std::vector<std::uint64_t> holds_from_;  // per logical rank: the first version it surely holds (replaced before)
    std::map<std::uint64_t, std::map<std::uint64_t, piece>> held_;  // version -> first id -> piece
    std::map<std::uint64_t, placement> placements_;
    node_order order_;  // the ranks by node: copies of a block on different nodes
    std::map<std::uint64_t, std::uint64_t> abandoned_;  // version -> the last submit that abandoned it
    std::uint64_t committed_ = 0;
    std::uint64_t op_ = 0;              // the current (or last) collective operation
    std::uint64_t op_version_ = 0;      // the version it submits or loads
    bool closed_ = false;               // the store object is gone (see close)
    bool deciding_ = false;             // the current operation is a submit not yet decided
    std::uint64_t decided_submit_ = 0;  // the last submit decided here: its parts go in recovery states
    bool in_op_ = false;
    // Joining of replacements (see recovery_state): a replaced rank's new
    // process takes no part in operations up to absent_until_[rank], the
    // last operation any survivor had begun at the recovery after which it
    // made this store (the one that replaced it, or a later one).
    std::vector<std::uint64_t> absent_until_;
    std::uint64_t next_tag_ = 0;                      // given to the next operation (the checkpoint's iteration)
    std::uint64_t last_tag_ = 0;                      // of the last operation begun
    std::uint64_t joined_after_tag_ = 0;              // on a replacement: the survivors' last operation had this tag
    bool replacement_ = false;                        // this store joined survivors' stores after a recovery
    std::uint64_t ended_op_ = 0;                      // the last operation ended here (see learn_outcome)
    // On a replacement: what the operation it joined after (joined_op_) ended
    // with is not known here yet; outcome_ is the newest word of it received.
    bool awaiting_outcome_ = false;
    std::uint64_t joined_op_ = 0;
    std::optional<head> outcome_;
    std::vector<char> tellers_;  // per rank: had the store when this process joined
    struct joined {
        std::uint64_t after = 0;  // the operation it joined after
        bool told = false;        // sent the outcome of that operation (since the last recovery)
    };
    std::map<int, joined> replacements_;  // replaced rank -> its new process's join
    std::map<std::uint64_t, detail::op_record> ops_;  // operation -> the parts known here
    sent_words sent_, sent_before_;                   // of the current operation and of the one before
    std::map<std::uint64_t, request> outstanding_;    // puts and gets of the current operation
    std::map<std::uint64_t, request> repairs_;        // puts that restore copies
    // Sends and reply receives that MPI may still read or write the memory
    // of (held blocks, the caller's output): waited for before returning.
    int in_flight_ = 0;
    char* out_ = nullptr;  // where the current load's blocks go
    std::vector<id_range> lost_ids_;
    std::mt19937_64 rng_;
    store_counters counters_;
};

}  // namespace rampart::store
