// Crash recovery and the end of the job, after section III-C2 of "Integrating
// Inter-Node Communication with a Resilient Asynchronous Many-Task Runtime
// System" (Paul et al., FTXS 2020).
//
// A failure seen by any rank (an MPI error, a failed process reported by
// ULFM) makes it revoke the communicator, so every other process fails out of
// MPI and joins. All then shrink and agree until the agreement holds, compare
// the survivors with the processes alive before, and give each dead logical
// rank to the lowest idle spare, the same way on every process. The spare runs
// the program from its start. Survivors re-execute nothing: they exchange how
// many messages of every (source, tag) channel they have received, and re-send
// from their send logs whatever the receiver lacks, which for a replacement
// is everything. Receivers drop what they already have by sequence number.
//
// At every recovery each process also tells each one it shares a channel
// with (only those: see exchange_channel_counts), for each channel it sends
// on, where its log starts and how many messages it has sent, so that a
// receiver knows which sequence will arrive next: before what it has
// (duplicates to drop, from a replacement that runs again), at it, or after
// it (messages lost for good after a checkpoint trimmed the logs; see
// engine_checkpoint.cpp).

#include "engine_impl.hpp"

#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <thread>

namespace rampart::comm::detail {

namespace {
constexpr auto drain_limit = std::chrono::seconds(10);
}  // namespace

bool engine::impl::watch() {
    bool progress = false;
    int comm_source = -1;
    while (auto bytes = receive_any(control_tag_, comm_source)) {
        progress = true;
        auto m = decode_control(bytes->data(), bytes->size(), owner_.size_, owner_.max_tag_);
        if (!m) {
            ++malformed_;
            continue;
        }
        const envelope& e = m->env;
        if (e.sequence == control_done)
            on_done(*m, comm_source);
        else if (e.sequence == control_restored && logical_of_comm_rank(comm_source) == e.source)
            on_control(*m);
        else if (e.sequence == control_failed && logical_of_comm_rank(comm_source) == e.source)
            on_failed(e.source, comm_source);
        else if (e.sequence != control_stopped)  // late answers to a failure of this rank's own: none expected
            ++malformed_;
    }
    if (failure_seen_) return true;
#if RAMPART_HAVE_ULFM
    MPI_Group failed;
    if (MPIX_Comm_get_failed(comm_, &failed) == MPI_SUCCESS) {
        int n = 0;
        MPI_Group_size(failed, &n);
        MPI_Group_free(&failed);
        if (n > 0) {
            failure_seen_ = true;
            if (last_error_.empty()) last_error_ = "MPI reports a failed process";
            return true;
        }
    }
#endif
    return progress;
}

void engine::impl::maybe_kill_during_recovery() {
    if (role_ != role::working || recovery_kill_checked_) return;
    recovery_kill_checked_ = true;
    if (const kill_order* k = owner_.my_kill_order(); k && k->during_recovery) owner_.die("recovery");
}

#if RAMPART_HAVE_ULFM
// One round of a recovery after the revoke: shrink and agree, find the dead,
// give their logical ranks to spares or record them lost, and fail the
// receives that can no longer complete.
void engine::impl::shrink_and_take_over(recovery_record& r) {
    const std::vector<int> before = members_->alive_processes();
    shrink_and_agree();
    std::vector<int> dead;
    for (int p : before)
        if (comm_rank_of_process_[static_cast<std::size_t>(p)] < 0) dead.push_back(p);
    auto change = members_->remove(dead);
    r.agreed_us = wall_clock_us();
    r.dead.insert(r.dead.end(), change.dead_logical.begin(), change.dead_logical.end());
    r.dead_spares.insert(r.dead_spares.end(), change.dead_spares.begin(), change.dead_spares.end());
    r.replacements.insert(r.replacements.end(), change.replacements.begin(), change.replacements.end());
    kill_processes(dead);  // declared dead but maybe only hung
    for (auto [logical, process] : change.replacements) {
        done_from_[static_cast<std::size_t>(logical)] = 0;  // the replacement has the program ahead of it
        std::erase_if(final_count_, [logical](const auto& kv) { return kv.first.first == logical; });
        if (process == process_) become(logical);
        // What it will send (again) is learnt in exchange_and_resend.
    }
    if (!change.lost.empty()) {
        lost_.insert(lost_.end(), change.lost.begin(), change.lost.end());
        std::sort(lost_.begin(), lost_.end());
        r.lost.insert(r.lost.end(), change.lost.begin(), change.lost.end());
        fail_all_waiting("failed ranks: " + recovery::detail::join_ranks(lost_) + " (no spare rank replaced them)");
    } else if (dead.empty() && lost_.empty()) {
        // MPI failed an operation, yet every process lives: nothing to
        // replace, and no way to know what the error lost.
        fail_all_waiting(last_error_);
    }
}
#endif

void engine::impl::recover() {
#if !RAMPART_HAVE_ULFM
    // Without ULFM a failure cannot be survived: report it to every receiver.
    failure_seen_ = false;
    fail_all_waiting(last_error_);
    return;
#else
    recovery_record r;
    r.detect_us = wall_clock_us();
    {
        std::lock_guard lock(mutex_);
        recovering_ = true;
    }
    for (;;) {
        ++r.rounds;
        kill_processes(failed_processes());  // a hung process must end for the shrink to complete
        revoke();
        drain();
        failure_seen_ = false;
        shrink_and_take_over(r);
        maybe_kill_during_recovery();  // fault injection: a crash after the agreement, in the midst of recovery
        if (!exchange_and_resend(r) || !exchange_service_states() || failure_seen_)
            continue;  // another process died meanwhile
        break;
    }
    if (self_done_) announce_done();  // what was in flight died with the old communicator
    std::vector<int> replaced;
    for (auto [logical, process] : r.replacements) replaced.push_back(logical);
    ++recoveries_ended_;
    notify_services(replaced, r.lost);
    {
        std::lock_guard lock(mutex_);
        recovering_ = false;
    }
    role_cv_.notify_all();
    r.resumed_us = wall_clock_us();
    recoveries_.push_back(std::move(r));
#endif
}

bool engine::impl::confirmed(bool ok) {
#if RAMPART_HAVE_ULFM
    if (!ok) MPIX_Comm_revoke(comm_);  // the others leave the collective too, and agree
    int flag = ok ? 1 : 0;
    const int rc = MPIX_Comm_agree(comm_, &flag);
    if (rc == MPI_SUCCESS && flag) return true;
    failure_seen_ = true;
    if (last_error_.empty()) last_error_ = "a collective step failed on some process";
    return false;
#else
    return ok;
#endif
}

void engine::impl::revoke() {
#if RAMPART_HAVE_ULFM
    MPIX_Comm_revoke(comm_);
#endif
}

// After a revoke MPI completes every pending request, most with an error.
// Receives that completed are delivered; the rest stay waiting and are
// received again on the new communicator. Sends are in the log. Services
// learn of their failed receives and ask again in on_recovery.
void engine::impl::drain() {
    const auto deadline = std::chrono::steady_clock::now() + drain_limit;
    fail_unmatched_replies();
    while (!sends_.empty() || !recvs_.empty() || !service_recvs_.empty()) {
        test_sends();
        test_receives();
        test_service_receives();
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr,
                         "rampart: rank %d: MPI did not end %zu sends and %zu receives within %lld s of a revoke\n",
                         owner_.rank_, sends_.size(), recvs_.size(),
                         static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(drain_limit).count()));
            std::raise(SIGKILL);  // the others replace this process
        }
    }
}

void engine::impl::shrink_and_agree() {
#if RAMPART_HAVE_ULFM
    // ULFM's robust loop: a process may die between shrink and agree, so
    // shrink again until an agreement over the shrunk communicator holds.
    MPI_Comm c = comm_;
    for (;;) {
        MPI_Comm shrunk = MPI_COMM_NULL;
        if (MPIX_Comm_shrink(c, &shrunk) != MPI_SUCCESS) {
            std::fprintf(stderr, "rampart: MPIX_Comm_shrink failed; this process ends\n");
            std::raise(SIGKILL);
        }
        MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN);
        int flag = 1;
        int rc = MPIX_Comm_agree(shrunk, &flag);
        if (c != MPI_COMM_WORLD) MPI_Comm_free(&c);
        c = shrunk;
        if (rc == MPI_SUCCESS) break;
        MPIX_Comm_revoke(c);
    }
    comm_ = c;
#endif
    MPI_Group group, world;
    MPI_Comm_group(comm_, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int m = 0;
    MPI_Group_size(group, &m);
    std::vector<int> in(static_cast<std::size_t>(m)), out(static_cast<std::size_t>(m));
    std::iota(in.begin(), in.end(), 0);
    MPI_Group_translate_ranks(group, m, in.data(), world, out.data());
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    comm_rank_of_process_.assign(static_cast<std::size_t>(world_size_), -1);
    for (int i = 0; i < m; ++i) comm_rank_of_process_[static_cast<std::size_t>(out[static_cast<std::size_t>(i)])] = i;
}

void engine::impl::become(int logical) {
    {
        std::lock_guard lock(mutex_);
        owner_.rank_ = logical;
        owner_.incarnation_ = members_->incarnation(logical);
        role_ = role::working;
    }
    role_cv_.notify_all();
}

// Every process tells each process it shares channels with, for those
// channels, how many messages it holds from it (received), and where its
// send log starts and how many it has sent; each then re-sends from its log what the other lacks,
// and knows which message each of its sources will send next.
//
// The words sent to one process: k, then k pairs (tag, messages held from
// it), then triples (tag, log base, next send sequence) of the channels to it.
// Idle spares send nothing.
bool engine::impl::exchange_and_resend(recovery_record& r) {
    std::vector<channel_counts> from;
    if (!exchange_channel_counts(from)) return false;
    r.counted_us = wall_clock_us();
    if (role_ != role::working) return true;
    resume_receive_streams(from);
    if (logging_) resend_unreceived(from, r);
    return true;
}

// What this process tells each process (by rank in comm_): the messages it
// holds from it per tag, and per tag the messages it sent to it (from the
// base of its log, or from the next one without a log).
std::vector<channel_counts> engine::impl::my_channel_counts(std::size_t processes) const {
    std::vector<channel_counts> mine(processes);
    for (auto& [key, ch] : channels_) {
        const int cr = comm_rank_of_logical(key.first);
        if (ch.held() == 0 || cr < 0) continue;
        mine[static_cast<std::size_t>(cr)].held.push_back({key.second, ch.held()});
    }
    for (auto& [key, next] : next_send_sequence_) {
        const int cr = comm_rank_of_logical(key.first);
        if (cr < 0) continue;
        // Without a log nothing is sent again: the channel goes on at `next`.
        const std::uint64_t base = logging_ ? std::min(log_.base(key.first, key.second), next) : next;
        mine[static_cast<std::size_t>(cr)].sending.push_back({key.second, base, next});
    }
    return mine;
}

// Counts go only between processes that share a channel, so that a
// recovery costs each process messages in proportion to its peers, not to
// the job (the paper's all-to-all grows with it). Each sends its words to
// its peers as synchronous sends, receives what comes, and joins a
// non-blocking agreement once its own sends are matched: when the agreement
// ends every send was (the NBX exchange of Hoefler et al., 2010, with ULFM's
// agreement as its barrier, which failures cannot break as they break
// MPI_Ibarrier), and it also says whether the exchange held everywhere.
// `from` gets what each process said, checked (a process that shares no
// channel with this one says nothing, and so do idle spares).
bool engine::impl::exchange_channel_counts(std::vector<channel_counts>& from) {
    int m = 0, me = 0;
    MPI_Comm_size(comm_, &m);
    MPI_Comm_rank(comm_, &me);
    const auto M = static_cast<std::size_t>(m);
    from.assign(M, {});
    std::vector<std::vector<std::uint64_t>> words(M);
    std::vector<MPI_Request> sends;
    bool ok = true;
    if (role_ == role::working) {
        const std::vector<channel_counts> mine = my_channel_counts(M);
        for (std::size_t i = 0; i < M && ok; ++i) {
            if (mine[i].held.empty() && mine[i].sending.empty()) continue;
            if (static_cast<int>(i) == me) {
                from[i] = mine[i];
                continue;
            }
            append_channel_counts(words[i], mine[i]);
            sends.emplace_back(MPI_REQUEST_NULL);
            ok = MPI_Issend(words[i].data(), static_cast<int>(words[i].size()), MPI_UINT64_T, static_cast<int>(i),
                            counts_tag_, comm_, &sends.back()) == MPI_SUCCESS;
        }
    }
    if (exchange_counts_until_agreed(ok, sends, from)) return true;
    revoke();  // the sends still pending end now, with an error
    MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    failure_seen_ = true;
    if (last_error_.empty()) last_error_ = "the exchange of message counts failed on some process";
    return false;
}

// Receives counts until the closing agreement has ended; this process joins
// it once its sends are matched, or at once, saying no, after an error (and
// revokes, so that no process waits for it to receive). True when every
// process said yes.
bool engine::impl::exchange_counts_until_agreed(bool ok, std::vector<MPI_Request>& sends,
                                                std::vector<channel_counts>& from) {
    MPI_Request closing = MPI_REQUEST_NULL;
    int flag = 1, ended = 0, rc = MPI_SUCCESS;
    while (!ended) {
        if (ok) ok = take_waiting_counts(from);
        if (closing == MPI_REQUEST_NULL) {
            int all = 0;
            if (ok) ok = MPI_Testall(static_cast<int>(sends.size()), sends.data(), &all, MPI_STATUSES_IGNORE) ==
                         MPI_SUCCESS;
            if (!ok) revoke();
            if (!ok || all) {
                flag = ok ? 1 : 0;
                if (join_agreement(flag, closing) != MPI_SUCCESS) return false;
            }
        } else {
            rc = MPI_Test(&closing, &ended, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) break;  // the agreement ended with a failure, alike everywhere
        }
        if (!ended) std::this_thread::yield();  // processes may share cores
    }
    if (rc != MPI_SUCCESS) failure_text(rc);
    return rc == MPI_SUCCESS && flag == 1 && ok;
}

// Every counts message waiting now, received; false at an MPI error.
bool engine::impl::take_waiting_counts(std::vector<channel_counts>& from) {
    for (;;) {
        int here = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, counts_tag_, comm_, &here, &st) != MPI_SUCCESS) return false;
        if (!here) return true;
        int n = 0;
        if (MPI_Get_count(&st, MPI_UINT64_T, &n) != MPI_SUCCESS || n < 0) return false;
        std::vector<std::uint64_t> got(static_cast<std::size_t>(n));
        if (MPI_Recv(got.data(), n, MPI_UINT64_T, st.MPI_SOURCE, counts_tag_, comm_, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return false;
        if (role_ == role::working) take_counts(st.MPI_SOURCE, got, from);
    }
}

// ULFM's non-blocking agreement (the AND of the flags), or without ULFM a
// non-blocking barrier (nothing fails there: no recovery runs).
int engine::impl::join_agreement(int& flag, MPI_Request& request) {
#if RAMPART_HAVE_ULFM
    const int rc = MPIX_Comm_iagree(comm_, &flag, &request);
    if (rc != MPI_SUCCESS) {  // take part all the same, so that the others' agreement ends
        flag = 0;
        MPIX_Comm_agree(comm_, &flag);
    }
    return rc;
#else
    return MPI_Ibarrier(comm_, &request);
#endif
}

void engine::impl::take_counts(int source, const std::vector<std::uint64_t>& words, std::vector<channel_counts>& from) {
    auto said = decode_channel_counts(words.data(), words.size(), owner_.max_tag_);
    if (!said) {
        std::fprintf(stderr, "rampart: rank %d: malformed channel counts from process %d at a recovery: %s\n",
                     owner_.rank_, source, said.why().c_str());
        ++malformed_;
        return;
    }
    from[static_cast<std::size_t>(source)] = std::move(*said);
}

// Receiving side: where each source's messages resume. A source that says
// nothing of a channel (a replacement that starts again) will send it from 0.
void engine::impl::resume_receive_streams(const std::vector<channel_counts>& from) {
    for (int source = 0; source < owner_.size_; ++source) {
        const int cr = comm_rank_of_logical(source);
        if (cr < 0) continue;
        const channel_counts& f = from[static_cast<std::size_t>(cr)];
        for (auto it = channels_.lower_bound({source, std::numeric_limits<int>::min()});
             it != channels_.end() && it->first.first == source; ++it)
            it->second.stream_next = 0;
        for (const auto& s : f.sending) {
            channel& ch = channels_[{source, s.tag}];
            // It re-sends [max(held, base), next) from its log, then goes on at next.
            ch.stream_next = std::min(std::max(ch.held(), s.base), s.next);
        }
    }
}

// Sending side: from the log, what each receiver does not hold yet.
void engine::impl::resend_unreceived(const std::vector<channel_counts>& from, recovery_record& r) {
    const std::uint64_t resent_before = resent_.load(), bytes_before = resent_bytes_.load();
    for (int dest = 0; dest < owner_.size_; ++dest) {
        const int cr = comm_rank_of_logical(dest);
        if (cr < 0) continue;
        const channel_counts& f = from[static_cast<std::size_t>(cr)];
        auto received = [&](int tag) -> std::uint64_t {
            for (const auto& h : f.held)
                if (h.tag == tag) {
                    if (h.messages < log_.base(dest, tag))
                        std::fprintf(stderr,
                                     "rampart: rank %d: rank %d holds %llu messages with tag %d from it and asks for "
                                     "the next, but the send log was trimmed at a checkpoint up to message %llu: "
                                     "those in between are lost for good\n",
                                     owner_.rank_, dest, static_cast<unsigned long long>(h.messages), tag,
                                     static_cast<unsigned long long>(log_.base(dest, tag)));
                    return h.messages;
                }
            return 0;
        };
        log_.for_each_unreceived(dest, received, [&](const recovery::detail::logged_message& msg) { resend(msg); });
    }
    r.resent_messages += resent_.load() - resent_before;
    r.resent_bytes += resent_bytes_.load() - bytes_before;
}

// Every process hands every other the recovery states of its services:
// entries (u32 service number, u32 bytes, bytes). Spares have none.
bool engine::impl::exchange_service_states() {
    std::vector<char> mine;
    {
        std::lock_guard lock(services_mutex_);
        for (auto& [n, s] : services_) append_service_state(mine, n, s->recovery_state());
        states_pending_ = true;  // no service attaches until they hear of this recovery (notify_services)
    }
    int m = 0;
    MPI_Comm_size(comm_, &m);
    const auto M = static_cast<std::size_t>(m);
    int size = static_cast<int>(mine.size());
    std::vector<int> sizes(M), displs(M);
    int rc = MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_);
    std::size_t total = 0;
    for (std::size_t i = 0; i < M && rc == MPI_SUCCESS; ++i) {
        displs[i] = static_cast<int>(total);
        total += static_cast<std::size_t>(sizes[i]);
    }
    std::vector<char> all(std::max<std::size_t>(total, 1));
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, comm_);
    if (!confirmed(rc == MPI_SUCCESS)) {
        if (rc != MPI_SUCCESS) failure_text(rc);
        return false;
    }
    std::map<int, std::vector<std::vector<char>>> states;
    for (std::size_t i = 0; i < M; ++i) {
        const int logical = logical_of_comm_rank(static_cast<int>(i));
        if (logical < 0) continue;
        auto entries = decode_service_states(all.data() + displs[i], static_cast<std::size_t>(sizes[i]));
        if (!entries) {
            ++malformed_;
            continue;
        }
        for (service_state& entry : *entries) {
            auto& by_rank = states[entry.number];
            by_rank.resize(static_cast<std::size_t>(owner_.size_));
            by_rank[static_cast<std::size_t>(logical)] = std::move(entry.bytes);
        }
    }
    std::lock_guard lock(services_mutex_);
    service_states_ = std::move(states);
    std::lock_guard leaf(incarnations_mutex_);
    incarnations_.resize(static_cast<std::size_t>(owner_.size_));
    for (int l = 0; l < owner_.size_; ++l) incarnations_[static_cast<std::size_t>(l)] = members_->incarnation(l);
    return true;
}

void engine::impl::resend(const recovery::detail::logged_message& m) {
    ++resent_;
    resent_bytes_ += m.payload.bytes;
    start_send(active_send(op_resend{m.env.destination, m.env.tag, m.payload}, m.env));
}

void engine::impl::send_control(int process, std::uint64_t what, std::vector<std::uint64_t> words) {
    const envelope env = control_envelope(owner_.rank_, what, words.size() * sizeof(std::uint64_t));
    op_control c{process, {}};
    if (!words.empty()) {
        auto owner = std::make_shared<std::vector<std::uint64_t>>(std::move(words));
        c.payload.data = owner->data();
        c.payload.bytes = owner->size() * sizeof(std::uint64_t);
        c.payload.owner = std::move(owner);
    }
    start_send(active_send(std::move(c), env));
}

// A replacement resumed from a checkpoint: on the channels from it, the next
// message is at least the count it restored.
// (decode_control checked the pairs and their tags.)
void engine::impl::on_control(const control_message& m) {
    const std::vector<std::uint64_t>& words = m.words;
    for (std::size_t i = 0; i + 1 < words.size(); i += 2) {
        channel& ch = channels_[{m.env.source, static_cast<int>(words[i])}];
        ch.stream_next = std::max(ch.stream_next, words[i + 1]);
    }
}

}  // namespace rampart::comm::detail
