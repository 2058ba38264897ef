// The end of a job, normal or not.
//
// Normal end: each rank's program ends and its engine tells every other
// process so (control_done), with the number of messages it sent on each
// channel to that process. A receive from a rank that has ended, on a
// channel whose messages have all been delivered, can never complete: it
// fails with a comm_error. Once every living rank has ended, one agreement
// over all processes ends the job.
//
// A program that fails (an exception leaves it while the runtime lives,
// std::terminate, exit() with the runtime alive) tells every other process
// (control_failed). Each stops at once, answers (control_stopped) and exits
// with status 0 without MPI_Finalize; the failing process goes on only once
// all have answered, or after a deadline, and then ends with its own status,
// which becomes the job's. Its death is never seen by a living process, so
// no spare replaces a rank whose program failed (it would fail again alike),
// and its message is printed while nothing tears the job down.

#include "engine_impl.hpp"

#include <rampart/resilience/errors.hpp>
#include <rampart/task/errors.hpp>
#include <rampart/task/runtime_hooks.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <thread>

namespace rampart::comm::detail {

namespace {
// How long a failing rank waits for the others to stop.
constexpr auto stop_deadline = std::chrono::milliseconds(1500);
}  // namespace

void engine::impl::announce_done() {
    self_done_ = true;
    done_from_[static_cast<std::size_t>(owner_.rank_)] = 1;
    for (int p : members_->alive_processes()) {
        if (p == process_) continue;
        // The logical rank the counts are for (a spare has none yet), then
        // (tag, messages sent) of the channels to it.
        const int dest = members_->logical_of(p);
        std::vector<std::uint64_t> words{static_cast<std::uint64_t>(static_cast<std::int64_t>(dest))};
        for (auto it = next_send_sequence_.lower_bound({dest, std::numeric_limits<int>::min()});
             dest >= 0 && it != next_send_sequence_.end() && it->first.first == dest; ++it)
            words.insert(words.end(), {static_cast<std::uint64_t>(it->first.second), it->second});
        send_control(p, control_done, std::move(words));
    }
}

// (decode_control checked the words: the rank they are for, then pairs.)
void engine::impl::on_done(const control_message& m, int comm_source) {
    const envelope& e = m.env;
    const std::vector<std::uint64_t>& words = m.words;
    if (logical_of_comm_rank(comm_source) != e.source) {
        ++malformed_;
        return;
    }
    std::erase_if(final_count_, [&](const auto& kv) { return kv.first.first == e.source; });
    // Counts sent for another logical rank (this process was a spare then)
    // say nothing of its channels now.
    const auto source = static_cast<std::size_t>(e.source);
    counts_for_[source] = static_cast<int>(static_cast<std::int64_t>(words[0]));
    for (std::size_t i = 1; i < words.size(); i += 2)
        final_count_[{e.source, static_cast<int>(words[i])}] = words[i + 1];
    done_from_[source] = 1;
}

bool engine::impl::everyone_done() const {
    for (int l = 0; l < owner_.size_; ++l)
        if (!done_from_[static_cast<std::size_t>(l)] && members_->process_of(l) >= 0) return false;
    return true;
}

bool engine::impl::ended_for_good(const std::pair<int, int>& key, const channel& ch) const {
    const auto source = static_cast<std::size_t>(key.first);
    if (!done_from_[source] || counts_for_[source] != owner_.rank_ || key.first == owner_.rank_) return false;
    const auto it = final_count_.find(key);
    return ch.next_sequence >= (it == final_count_.end() ? 0 : it->second);
}

void engine::impl::fail_ended(const std::pair<int, int>& key, channel& ch) {
    const std::string text = "rampart: irecv from rank " + std::to_string(key.first) + " with tag " +
                             std::to_string(key.second) + " can never complete: the program of rank " +
                             std::to_string(key.first) + " has ended, and every message it sent with this tag (" +
                             std::to_string(ch.next_sequence) + ") has been received";
    while (!ch.waiting.empty()) fail_front(ch, std::make_exception_ptr(comm_error(text)));
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

bool engine::impl::program_running() const {
    std::lock_guard lock(mutex_);
    return state_ == state::running && !stop_ && role_ == role::working;
}

void engine::impl::begin_failing() {
    if (failing_ || self_done_) return;
    failing_ = true;
    ending_ = ending::failed;
    failed_at_us_ = wall_clock_us();
    failing_deadline_ = std::chrono::steady_clock::now() + stop_deadline;
    awaiting_stop_.clear();
    for (int p : members_->alive_processes())
        if (p != process_) {
            awaiting_stop_.push_back(p);
            send_control(p, control_failed);
        }
}

// While failing, only control messages matter. Processes that stopped exit
// without MPI_Finalize, which MPI may report as failures: acknowledged, so
// that probes from any source keep working, and counted as stopped.
bool engine::impl::failing_over() {
    test_sends();
    for (int p : failed_processes()) std::erase(awaiting_stop_, p);
    int comm_source = -1;
    while (auto bytes = receive_any(control_tag_, comm_source)) {
        envelope e;
        if (bytes->size() < sizeof e) continue;
        std::memcpy(&e, bytes->data(), sizeof e);
        if (e.magic != envelope::magic_value || e.kind != control_kind) continue;
        if (e.sequence != control_stopped && e.sequence != control_failed) continue;
        // Two programs failed at once: the lower rank's message is the one
        // the job ends with; the higher stops as if only the lower had failed.
        if (e.sequence == control_failed && e.source >= 0 && e.source < owner_.rank_ &&
            logical_of_comm_rank(comm_source) == e.source)
            stop_for(e.source, comm_source);
        const auto it = std::find(comm_rank_of_process_.begin(), comm_rank_of_process_.end(), comm_source);
        if (it != comm_rank_of_process_.end())
            std::erase(awaiting_stop_, static_cast<int>(it - comm_rank_of_process_.begin()));
    }
    failure_seen_ = false;  // nothing is recovered any more
    return awaiting_stop_.empty() || std::chrono::steady_clock::now() > failing_deadline_;
}

// Another rank's program failed: this process stops at once.
void engine::impl::on_failed(int failed_rank, int comm_source) {
    if (failing_) return;  // failing too: it ends on its own once the others stopped
    stop_for(failed_rank, comm_source);
}

void engine::impl::stop_for(int failed_rank, int comm_source) {
    ending_ = ending::stopped;
    stopped_by_ = failed_rank;
    if (role_ == role::working) owner_.write_report();
    envelope answer = control_envelope(owner_.rank_, control_stopped, 0);
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(&answer, static_cast<int>(sizeof answer), MPI_BYTE, comm_source, control_tag_, comm_, &request) ==
        MPI_SUCCESS) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        int flag = 0;
        while (!flag && std::chrono::steady_clock::now() < deadline)
            if (MPI_Test(&request, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
    }
    std::fflush(nullptr);
    ::_exit(0);  // the failing rank's status is the job's
}

// The engine ends while operations are pending: each gets an error.
void engine::impl::fail_everything(const std::exception_ptr& error) {
    for (auto& [key, ch] : channels_) {
        ch.busy = false;
        while (!ch.waiting.empty()) fail_front(ch, error);
    }
    for (auto& s : sends_) std::visit([&](auto& o) { o.abandon(error); }, s.o);
    for (auto& r : service_recvs_)
        if (r.done) std::exchange(r.done, nullptr)(false, 0);
    // MPI may still hold their memory: the lists stay, the process is ending.
}

void engine::impl::shut_down() {
    std::deque<op> late;
    {
        std::lock_guard lock(mutex_);
        state_ = state::stopped;
        late.swap(inbox_);  // pushed after the loop ended: answered here
    }
    std::exception_ptr cause;
    {
        std::lock_guard lock(mutex_);
        cause = cause_;
    }
    const auto error = cause ? cause
                             : std::make_exception_ptr(comm_error("rampart: the job is ending: the program of rank " +
                                                                  std::to_string(owner_.rank_) + " failed"));
    for (auto& o : late) std::visit([&](auto& x) { x.abandon(error); }, o);
    if (failing_) fail_everything(error);
    if (role_ == role::working) owner_.write_report();
    // After a failure MPI_Finalize hangs in a good share of runs, and with
    // the heartbeat detector in every run, so the process then ends without
    // it, keeping the program's exit code: the final agreement has ended the
    // job already. Otherwise Finalize runs under a watchdog that ends the
    // process with success should it hang all the same.
    const char* detector = std::getenv("OMPI_MCA_mpi_ft_detector");
    const bool heartbeats = detector && (std::string(detector) == "true" || std::string(detector) == "1");
    if (recoveries_.empty() && !failing_ && !heartbeats) {
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

void engine::impl::fail_program(std::exception_ptr cause) {
    {
        std::lock_guard lock(mutex_);
        if (state_ != state::running || role_ != role::working || failing_requested_) return;
        failing_requested_ = true;
        cause_ = std::move(cause);
    }
    try {
        run_on_engine([this] { begin_failing(); });
    } catch (const comm_error&) {
        return;  // the engine has shut down already
    }
    stop();  // the loop ends once the others have stopped
}

namespace {

// A program that fails ends the whole job: when an
// exception leaves the runtime's scope, a resilient task fails for good, at
// std::terminate, and at exit() while the runtime lives.
void on_runtime_end(bool exception_in_flight) {
    engine* e = engine::started();
    if (!e) return;
    if (exception_in_flight) return e->program_failed(nullptr);
    if (auto cause = e->failure_here()) {
        // A task failed for good and ended the job, and the program went on
        // to its end without seeing it: the job must not look successful.
        std::fprintf(stderr, "rampart: rank %d: %s\n", e->rank(), rampart::describe(cause).c_str());
        std::fflush(nullptr);
        ::_exit(EXIT_FAILURE);
    }
}

void on_task_failure(std::exception_ptr cause) {
    if (engine* e = engine::started()) e->program_failed(std::move(cause));
}

[[noreturn]] void on_terminate() {
    std::string what = "std::terminate was called";
    if (auto x = std::current_exception()) {
        try {
            std::rethrow_exception(x);
        } catch (const std::exception& error) {
            what = std::string("an uncaught exception: ") + error.what();
        } catch (...) {
            what = "an uncaught exception";
        }
    }
    if (engine* e = engine::started()) {
        std::fprintf(stderr, "rampart: rank %d: the program ended with %s\n", e->rank(), what.c_str());
        e->program_failed(std::current_exception());
    } else {
        std::fprintf(stderr, "rampart: the program ended with %s\n", what.c_str());
    }
    std::fflush(nullptr);
    // Not abort(): the launcher reports a job whose last process died by a
    // signal as a success.
    std::_Exit(EXIT_FAILURE);
}

void on_process_exit(int status, void*) {
    engine* e = engine::started();
    if (!e || !e->program_running()) return;
    std::fprintf(stderr, "rampart: rank %d: the program called exit(%d) while its rampart::runtime was alive\n",
                 e->rank(), status);
    e->program_failed(nullptr);
    if (status == 0) {  // it did not end: the job must not look successful
        std::fflush(nullptr);
        ::_exit(EXIT_FAILURE);
    }
}

[[maybe_unused]] const bool end_hooks_set =
    (rampart::set_runtime_end_hook(&on_runtime_end), rampart::set_task_failure_hook(&on_task_failure), true);

}  // namespace

bool engine::program_running() const { return impl_->program_running(); }

void engine::program_failed(std::exception_ptr cause) {
    if (std::this_thread::get_id() == impl_->thread_.get_id()) return;
    impl_->fail_program(std::move(cause));
}

void engine::impl::install_failure_handlers() {
    std::set_terminate(&on_terminate);
    ::on_exit(&on_process_exit, nullptr);
}

std::exception_ptr engine::failure_here() const {
    std::lock_guard lock(impl_->mutex_);
    return impl_->cause_;
}

}  // namespace rampart::comm::detail
