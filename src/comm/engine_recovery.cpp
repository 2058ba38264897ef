// Crash recovery and the end of the job (DESIGN.md "Crash recovery"; the
// amt-resilience-with-mpi-communication paper, III-C2).
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

#include "engine_impl.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <unistd.h>

namespace rampart::comm::detail {

namespace {
constexpr std::uint16_t control_kind = 3;
constexpr std::uint64_t control_done = 1;  // the sender's program has ended
constexpr auto drain_limit = std::chrono::seconds(10);
}  // namespace

bool engine::impl::watch() {
    bool progress = false;
    int comm_source = -1;
    while (auto bytes = receive_any(control_tag_, comm_source)) {
        progress = true;
        envelope e;
        if (bytes->size() != sizeof e) {
            ++malformed_;
            continue;
        }
        std::memcpy(&e, bytes->data(), sizeof e);
        if (e.magic != envelope::magic_value || e.kind != control_kind || e.source < 0 || e.source >= owner_.size_) {
            ++malformed_;
            continue;
        }
        if (e.sequence == control_done) done_from_[static_cast<std::size_t>(e.source)] = 1;
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

void engine::impl::recover() {
#if !RAMPART_HAVE_ULFM
    // Without ULFM a failure cannot be survived: report it to every receiver.
    failure_seen_ = false;
    fail_all_waiting(last_error_);
    return;
#else
    recovery_record r;
    r.detect_us = wall_clock_us();
    for (;;) {
        ++r.rounds;
        revoke();
        drain();
        failure_seen_ = false;
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
        for (auto [logical, process] : change.replacements) {
            done_from_[static_cast<std::size_t>(logical)] = 0;  // the replacement has the program ahead of it
            if (process == process_) become(logical);
            // It will send again, from sequence 0, what it had sent before.
            for (auto& [key, ch] : channels_)
                if (key.first == logical) ch.duplicates_due = ch.next_sequence;
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
        maybe_kill_during_recovery();  // fault injection: a crash after the agreement, in the midst of recovery
        if (!exchange_and_resend(r) || failure_seen_) continue;  // another process died meanwhile
        break;
    }
    if (self_done_) announce_done();  // what was in flight died with the old communicator
    std::vector<int> replaced;
    for (auto [logical, process] : r.replacements) replaced.push_back(logical);
    notify_services(replaced, r.lost);
    r.resumed_us = wall_clock_us();
    recoveries_.push_back(std::move(r));
#endif
}

void engine::impl::revoke() {
#if RAMPART_HAVE_ULFM
    MPIX_Comm_revoke(comm_);
#endif
}

// After a revoke MPI completes every pending request, most with an error.
// Receives that completed are delivered; the rest stay waiting and are
// received again on the new communicator. Sends are in the log.
void engine::impl::drain() {
    const auto deadline = std::chrono::steady_clock::now() + drain_limit;
    while (!sends_.empty() || !recvs_.empty()) {
        test_sends();
        test_receives();
        if (std::chrono::steady_clock::now() > deadline) {
            std::fprintf(stderr, "rampart: rank %d: MPI did not end %zu sends and %zu receives within %lld s of a revoke\n",
                         owner_.rank_, sends_.size(), recvs_.size(),
                         static_cast<long long>(std::chrono::duration_cast<std::chrono::seconds>(drain_limit).count()));
            std::raise(SIGKILL);  // the others replace this process
        }
    }
}

void engine::impl::shrink_and_agree() {
#if RAMPART_HAVE_ULFM
    // The robust loop of ULFM.md: a process may die between shrink and agree.
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
        MPI_Comm_free(&c);
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

// Every process tells every other how many messages it has received on each
// channel from it; each then re-sends from its log what the other lacks.
bool engine::impl::exchange_and_resend(recovery_record& r) {
    int m = 0;
    MPI_Comm_size(comm_, &m);
    const auto M = static_cast<std::size_t>(m);
    std::vector<std::vector<std::uint64_t>> have(M);
    for (auto& [key, ch] : channels_) {
        const int cr = comm_rank_of_logical(key.first);
        if (ch.next_sequence == 0 || cr < 0) continue;
        have[static_cast<std::size_t>(cr)].push_back(static_cast<std::uint64_t>(key.second));
        have[static_cast<std::size_t>(cr)].push_back(ch.next_sequence);
    }
    std::vector<int> send_counts(M), recv_counts(M), send_displs(M), recv_displs(M);
    std::vector<std::uint64_t> flat;
    for (std::size_t i = 0; i < M; ++i) {
        send_displs[i] = static_cast<int>(flat.size());
        send_counts[i] = static_cast<int>(have[i].size());
        flat.insert(flat.end(), have[i].begin(), have[i].end());
    }
    int rc = MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
    if (rc != MPI_SUCCESS) {
        failure_text(rc);
        return false;
    }
    std::size_t total = 0;
    for (std::size_t i = 0; i < M; ++i) {
        recv_displs[i] = static_cast<int>(total);
        total += static_cast<std::size_t>(recv_counts[i]);
    }
    std::vector<std::uint64_t> got(std::max<std::size_t>(total, 1));
    rc = MPI_Alltoallv(flat.data(), send_counts.data(), send_displs.data(), MPI_UINT64_T, got.data(),
                       recv_counts.data(), recv_displs.data(), MPI_UINT64_T, comm_);
    if (rc != MPI_SUCCESS) {
        failure_text(rc);
        return false;
    }
    if (!logging_ || role_ != role::working) return true;
    const std::uint64_t resent_before = resent_.load(), bytes_before = resent_bytes_.load();
    for (int dest = 0; dest < owner_.size_; ++dest) {
        const int cr = comm_rank_of_logical(dest);
        if (cr < 0) continue;
        const std::size_t at = static_cast<std::size_t>(recv_displs[static_cast<std::size_t>(cr)]);
        const std::size_t n = static_cast<std::size_t>(recv_counts[static_cast<std::size_t>(cr)]);
        auto received = [&](int tag) -> std::uint64_t {
            for (std::size_t i = at; i + 1 < at + n; i += 2)
                if (got[i] == static_cast<std::uint64_t>(tag)) return got[i + 1];
            return 0;
        };
        log_.for_each_unreceived(dest, received, [&](const recovery::detail::logged_message& msg) { resend(msg); });
    }
    r.resent_messages += resent_.load() - resent_before;
    r.resent_bytes += resent_bytes_.load() - bytes_before;
    return true;
}

void engine::impl::resend(const recovery::detail::logged_message& m) {
    active_send a;
    a.o = op(op::what::resend);
    a.o.peer = m.env.destination;
    a.o.tag = m.env.tag;
    a.o.payload = m.payload;
    a.env = m.env;
    ++resent_;
    resent_bytes_ += m.payload.bytes;
    start_send(std::move(a));
}

void engine::impl::send_control(int process, std::uint64_t what) {
    active_send a;
    a.o = op(op::what::control);
    a.o.peer = process;
    a.o.tag = control_tag_;
    a.env.kind = control_kind;
    a.env.source = owner_.rank_;
    a.env.sequence = what;
    start_send(std::move(a));
}

void engine::impl::announce_done() {
    self_done_ = true;
    done_from_[static_cast<std::size_t>(owner_.rank_)] = 1;
    for (int p : members_->alive_processes())
        if (p != process_) send_control(p, control_done);
}

bool engine::impl::everyone_done() const {
    for (int l = 0; l < owner_.size_; ++l)
        if (!done_from_[static_cast<std::size_t>(l)] && members_->process_of(l) >= 0) return false;
    return true;
}

// Every program has ended and every process knows it: one agreement over all
// living processes, spares included, ends the job.
bool engine::impl::final_agreement() {
    if (world_size_ == 1) return true;
#if RAMPART_HAVE_ULFM
    int flag = 1;
    int rc = MPIX_Comm_agree(comm_, &flag);
#else
    int rc = MPI_Barrier(comm_);
#endif
    if (rc != MPI_SUCCESS) {
        failure_text(rc);
        return false;
    }
    return true;
}

void engine::impl::shut_down() {
    {
        std::lock_guard lock(mutex_);
        state_ = state::stopped;
    }
    if (role_ == role::working) owner_.write_report();
    // After a failure MPI_Finalize hangs in a good share of runs (ULFM.md), so
    // the process then ends without it, keeping the program's exit code.
    // Otherwise Finalize runs under a watchdog that ends the process with
    // success should it hang all the same.
    if (recoveries_.empty()) {
        std::thread([] {
            std::this_thread::sleep_for(std::chrono::seconds(5));
            ::_exit(0);
        }).detach();
        MPI_Finalize();
    }
    if (role_ == role::spare) {
        {
            std::lock_guard lock(mutex_);
            role_ = role::released;
        }
        role_cv_.notify_all();
    }
}

std::string engine::impl::recovery_json() const {
    // Appends only: GCC 12 warns wrongly (-Wrestrict) on chains of operator+.
    std::string s;
    auto list = [&s](const std::vector<int>& v) {
        s += '[';
        s += recovery::detail::join_ranks(v);
        s += ']';
    };
    auto field = [&s](const char* name, long long v) {
        s += ",\"";
        s += name;
        s += "\":";
        s += std::to_string(v);
    };
    s += "\"process\":" + std::to_string(process_);
    field("send_log_bytes", static_cast<long long>(log_.bytes()));
    field("send_log_messages", static_cast<long long>(log_.messages()));
    s += ",\"lost\":";
    list(lost_);
    s += ",\"recoveries\":[";
    for (std::size_t i = 0; i < recoveries_.size(); ++i) {
        const auto& r = recoveries_[i];
        s += i ? ",{\"dead\":" : "{\"dead\":";
        list(r.dead);
        s += ",\"dead_spares\":";
        list(r.dead_spares);
        s += ",\"lost\":";
        list(r.lost);
        s += ",\"replacements\":[";
        for (std::size_t j = 0; j < r.replacements.size(); ++j) {
            if (j) s += ',';
            list({r.replacements[j].first, r.replacements[j].second});
        }
        s += ']';
        field("rounds", r.rounds);
        field("detect_us", r.detect_us);
        field("agreed_us", r.agreed_us);
        field("resumed_us", r.resumed_us);
        field("resent_messages", static_cast<long long>(r.resent_messages));
        field("resent_bytes", static_cast<long long>(r.resent_bytes));
        s += '}';
    }
    s += ']';
    return s;
}

}  // namespace rampart::comm::detail
