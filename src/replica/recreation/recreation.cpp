// Re-creating a lost replica with a spare process.
//
// The spare coordinates. It asks every process of the program how many
// rampart_replica_sync calls it has passed, and each holds at its next sync
// until the spare decides. The spare chooses the sync after the furthest
// one; there every process of the program waits until all have arrived
// (a point where no message is on its way, since none may cross a sync).
// Then the spare takes the dead replica's place: every process routes that
// replica's messages to the spare from then on, the survivor elected to
// send for the dead replica sends the spare its state (replica_state.cpp),
// and the spare runs the program from there. One spare coordinates at a
// time: the lowest live spare not yet used. A spare that dies, or a
// survivor that dies before its state left, leaves the replica dead; the
// next spare tries again.

#include "protocol.hpp"

#include "report.hpp"
#include "set_cores.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

namespace rampart::replica::detail {

namespace {
std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

void protocol::protect(void* data, std::size_t bytes) {
    if (syncs_ > 0 && !replaying_)
        abort_job(3, "rank " + std::to_string(rank_) + " called rampart_replica_protect() after its first "
                     "rampart_replica_sync(): name the state before the first sync");
    if (!data && bytes > 0) abort_job(3, "rampart_replica_protect(NULL, " + std::to_string(bytes) + ")");
    regions_.push_back({data, bytes});
}

void protocol::sync() {
    if (replaying_) finish_replay();
    logging_ = false;  // the set-up is over
    const long number = syncs_ + 1;
    // No poll of its own: a spare's question is seen in the program's next
    // MPI call, and a sync passed meanwhile is answered as passed.
    if (layout_.spares() > 0) {
        wait_until([&] { return !held(number); });
        if (coordination_.spare >= 0 && coordination_.sync == number) {
            join_recreation(number);
            syncs_ = number;
            forget_recreation();  // done (or off): a spare that asked meanwhile gets its answer now
            return;
        }
    }
    syncs_ = number;
}

bool protocol::held(long number) const {
    return coordination_.spare >= 0 && coordination_.sync == 0 && number > coordination_.hold_after;
}

// The sync of a re-creation: the state is complete here, and nothing may be
// on its way between the program's processes.
void protocol::join_recreation(long number) {
    if (!posted_.empty() || !unexpected_.empty() || !receiving_.empty())
        abort_job(3, "rank " + std::to_string(rank_) +
                         " called rampart_replica_sync() while a message was on its way to it (sent before the "
                         "sync, received after it): a replica cannot be re-created at such a point");
    if (rank_ == coordination_.rank) snapshot();
    send_control(coordination_.spare, arrived_tag, static_cast<std::uint64_t>(number));
    noting_ = true;
    wait_until([&] { return coordination_.go || coordination_.spare < 0; });
    noting_ = false;
    noted_.clear();
    if (!coordination_.go || coordination_.survivor != process_) return;
    kills_.sending_state();
    send_state(coordination_.spare);
    snapshot_ = {};
}

void protocol::forget_recreation() {
    coordination_ = coordination{};
    if (deferred_query_ >= 0 && !layout_.dead(deferred_query_)) {
        const int from = deferred_query_;
        deferred_query_ = -1;
        const std::uint64_t words[3] = {0, 0, 0};
        on_recreation_control(from, query_tag, words);
    }
    deferred_query_ = -1;
}

// The controls of a re-creation, at the program's processes and the spares.
void protocol::on_recreation_control(int from, int tag, const std::uint64_t* w) {
    const auto f = static_cast<std::size_t>(from);
    switch (tag) {
        case query_tag: {
            if (coordination_.sync != 0 && coordination_.spare != from) {
                deferred_query_ = from;  // answered once the re-creation under way is done
                return;
            }
            const long passed = syncs_;
            coordination_ = coordination{};
            coordination_.spare = from;
            coordination_.hold_after = passed;
            sync_answer a = sync_answer::ready;
            if (done_from_[static_cast<std::size_t>(process_)]) a = sync_answer::ended;
            if (setup_log_lost_ || regions_.empty()) a = sync_answer::cannot;
            send_control(from, synced_tag, static_cast<std::uint64_t>(passed), static_cast<std::uint64_t>(a));
            return;
        }
        case synced_tag:
            answers_[f] = w[0];
            answered_[f] = static_cast<char>(1 + w[1]);
            return;
        case decide_tag:
            if (from != coordination_.spare) return;
            coordination_.rank = static_cast<int>(w[0]);
            coordination_.replica = static_cast<int>(w[1]);
            coordination_.sync = static_cast<long>(w[2]);
            return;
        case arrived_tag:
            arrived_[f] = 1;
            return;
        case go_tag:
            return on_go(from, static_cast<int>(w[0]), static_cast<int>(w[1]), static_cast<int>(w[2]));
        case joined_tag:
            joined_[f] = 1;
            return;
        case abandon_tag:
            if (w[0]) recreation_impossible_ = true;
            if (from == coordination_.spare) forget_recreation();
            return;
    }
}

// Spare `from` is replica `replica` of `rank` from now on.
void protocol::on_go(int from, int rank, int replica, int survivor) {
    layout_.assign(rank, replica, from);
    used_spare_[static_cast<std::size_t>(from)] = 1;
    ++recreations_[static_cast<std::size_t>(rank * layout_.replicas() + replica)];
    channel_numbered_[static_cast<std::size_t>(from)] = 0;
    numbered_[static_cast<std::size_t>(from)] = 0;
    if (rank_ < 0) return;  // another spare
    tell_new_replica(from, rank, replica);
    const auto r = static_cast<std::size_t>(rank);
    if (layout_.process(rank, layout_.responsible(rank, replica_)) != source_process_[r]) switch_source(rank);
    send_control(from, joined_tag, 0);
    if (from != coordination_.spare) return;
    coordination_.go = true;
    coordination_.survivor = survivor;
}

// What this process received while it waited at the sync for the go came
// after the sync (others had passed it), and was acknowledged and voted on
// among the replicas it knew: the new replica gets its share now. Without
// it, the new replica waits forever for those acknowledgements and votes.
void protocol::tell_new_replica(int to, int rank, int replica) {
    for (const noted_message& m : noted_) {
        if (m.source == rank && layout_.responsible(rank, replica_) != replica)
            send_control(to, ack_tag, m.number, m.hash);
        if (rank_ == rank && layout_.replicas() >= 3)
            send_control(to, vote_tag, static_cast<std::uint64_t>(m.source), m.number, m.hash);
    }
}

// ---- The spare's side ----

bool protocol::program_ended() const {
    for (int p = 0; p < layout_.processes(); ++p)
        if (done_from_[static_cast<std::size_t>(p)] && (!layout_.spare(p) || used_spare_[static_cast<std::size_t>(p)]))
            return true;
    return false;
}

// This spare may re-create a replica: every lower spare is dead or used,
// and some rank lost a replica (but not all of them).
bool protocol::may_coordinate(int* rank, int* replica) const {
    if (recreation_impossible_) return false;
    for (int p = layout_.ranks() * layout_.replicas(); p < process_; ++p)
        if (!layout_.dead(p) && !used_spare_[static_cast<std::size_t>(p)]) return false;
    for (int i = 0; i < layout_.ranks(); ++i)
        for (int k = 0; k < layout_.replicas(); ++k)
            if (!layout_.alive(i, k) && layout_.live_replicas(i) > 0) {
                *rank = i;
                *replica = k;
                return true;
            }
    return false;
}

// Deaths are told through errors of MPI calls, and a spare makes few that
// could fail: every 5 ms it asks MPI which processes died.
void protocol::ask_for_deaths(std::chrono::steady_clock::time_point& last) {
    if (std::chrono::steady_clock::now() - last < std::chrono::milliseconds(5)) return;
    check_failures(MPI_SUCCESS);
    last = std::chrono::steady_clock::now();
}

// A spare waits, asleep between polls (it must not take the program's
// cores), until it re-creates a replica and returns into the program, or
// the program ends.
void protocol::serve_as_spare() {
    auto last_check = std::chrono::steady_clock::now();
    for (;;) {
        int rank = -1, replica = -1;
        while (!program_ended() && !may_coordinate(&rank, &replica)) {
            if (progress()) continue;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            ask_for_deaths(last_check);
        }
        if (program_ended()) {
            finalize();
            std::fflush(nullptr);
            ::_exit(0);
        }
        if (recreate(rank, replica)) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // before asking again
    }
}

void protocol::broadcast(int tag, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    for (int p = 0; p < layout_.processes(); ++p)
        if (p != process_ && !layout_.dead(p)) send_control(p, tag, a, b, c);
}

bool protocol::wait_for_all(const std::vector<char>& from) {
    wait_until([&] {
        if (program_ended()) return true;
        for (int i = 0; i < layout_.ranks(); ++i)
            for (int k = 0; k < layout_.replicas(); ++k) {
                const int p = layout_.process(i, k);
                if (p != process_ && !layout_.dead(p) && !from[static_cast<std::size_t>(p)]) return false;
            }
        return true;
    });
    return !program_ended();
}

// Every process of the program says how far it is; the re-creation
// happens at the sync after the furthest.
bool protocol::gather_replies(std::uint64_t* sync) {
    answered_.assign(answered_.size(), 0);
    for (int i = 0; i < layout_.ranks(); ++i)
        for (int k = 0; k < layout_.replicas(); ++k)
            if (layout_.alive(i, k)) send_control(layout_.process(i, k), query_tag, 0);
    if (!wait_for_all(answered_)) return false;
    std::uint64_t furthest = 0;
    for (std::size_t p = 0; p < answered_.size(); ++p) {
        if (!answered_[p] || layout_.dead(static_cast<int>(p))) continue;
        const auto a = static_cast<sync_answer>(answered_[p] - 1);
        // A spare that is still taking a replica's place (its state not yet
        // in, its program not yet at its first sync) cannot join a sync now,
        // but will: asked again later.
        if (a == sync_answer::cannot && !layout_.spare(static_cast<int>(p))) recreation_impossible_ = true;
        if (a != sync_answer::ready) return false;
        furthest = std::max(furthest, answers_[p]);
    }
    *sync = furthest + 1;
    return true;
}

void protocol::abandon() {
    broadcast(abandon_tag, recreation_impossible_ ? 1 : 0);
    wait_until([&] { return controls_.empty() || !test_controls(); });
}

bool protocol::recreate(int rank, int replica) {
    recreation_began_us = now_us();
    std::uint64_t sync = 0;
    if (!gather_replies(&sync)) {
        abandon();
        return false;
    }
    broadcast(decide_tag, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(replica), sync);
    arrived_.assign(arrived_.size(), 0);
    if (!wait_for_all(arrived_)) {
        abandon();
        return false;
    }
    const int survivor = layout_.process(rank, layout_.responsible(rank, replica));
    layout_.assign(rank, replica, process_);
    used_spare_[static_cast<std::size_t>(process_)] = 1;
    rank_ = rank;
    replica_ = replica;
    move_to_set_cores(replica);
    joined_.assign(joined_.size(), 0);
    broadcast(go_tag, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(replica),
              static_cast<std::uint64_t>(survivor));
    // The survivor sends nothing else: its death is asked for now and then.
    auto checked = std::chrono::steady_clock::now();
    wait_until([&] {
        ask_for_deaths(checked);
        return have_state_ || layout_.dead(survivor);
    });
    if (!have_state_) die_by_order(process_, "survivor lost");  // the replica stays dead; another spare may try
    kills_.recreating(rank, replica, ++recreations_[static_cast<std::size_t>(rank * layout_.replicas() + replica)],
                      process_);
    wait_for_all(joined_);
    install_state();
    return true;
}

}  // namespace rampart::replica::detail
