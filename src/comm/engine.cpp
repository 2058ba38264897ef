// The engine's message path: start-up, the polling loop, operations taken
// from the queue, and sends. Receives are in engine_receives.cpp, services in
// engine_services.cpp, crash recovery in engine_recovery.cpp, the end of the
// job in engine_ending.cpp.

#include "engine_impl.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/resilience/errors.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/runtime_hooks.hpp>

#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace rampart::comm::detail {

std::string describe_mismatch(const envelope& e, std::uint64_t expected_type, std::size_t received_bytes) {
    std::string s = "rampart: message from rank " + std::to_string(e.source) + " with tag " + std::to_string(e.tag) +
                    " does not fit the receiver: ";
    if (e.type_hash != expected_type)
        s += "the sender's type differs from the receiver's";
    else
        s += "the payload has " + std::to_string(received_bytes) +
             " bytes, which is not the size of the receiver's type";
    return s;
}

std::string mpi_error_text(int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return "MPI error " + std::to_string(rc) + " (" + std::string(text, static_cast<std::size_t>(len)) + ")";
}

std::int64_t wall_clock_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The largest tags are the engine's controls, services and the counts of a
// recovery; below those, the
// tags of service replies (one per reply number modulo their count); the
// rest is the program's.
void engine::impl::divide_tags() {
    void* ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
    control_tag_ = found ? *static_cast<int*>(ub) : 32767;
    service_tag_ = control_tag_ - 1;
    counts_tag_ = service_tag_ - 1;
    reply_tags_ = std::min(1 << 16, (control_tag_ - 3) / 2);
    reply_tag_base_ = counts_tag_ - reply_tags_;
    owner_.max_tag_ = reply_tag_base_ - 1;
}

namespace {
// A peer's death breaks its TCP connections, and a write to one raises
// SIGPIPE, whose default action ends this process too: across nodes a
// survivor died with its dead neighbour. MPI reports the error instead.
// A program's own handler is left alone.
void ignore_broken_connections() {
    struct sigaction now {};
    if (::sigaction(SIGPIPE, nullptr, &now) == 0 && now.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
}
}  // namespace

bool engine::impl::start(int spares) {
    ignore_broken_connections();
    thread_ = std::thread([this, spares] {
        die_before_mpi_if_ordered();
        watch_mpi_start();
        int provided = 0;
        int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        mpi_started_ = true;
        std::string error;
        if (rc == MPI_SUCCESS) {
            // The engine works on MPI_COMM_WORLD itself until the first
            // recovery: creating a communicator of its own is a collective
            // step that a process dying during start-up can break.
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            comm_ = MPI_COMM_WORLD;
            MPI_Comm_rank(comm_, &process_);
            MPI_Comm_size(comm_, &world_size_);
            divide_tags();
            try {
                members_.emplace(world_size_, spares);
            } catch (const std::exception& x) {
                error = x.what();
            }
        } else {
            error = "MPI_Init_thread returned " + std::to_string(rc);
        }
        if (error.empty()) {
            for (int p = 0; p < world_size_; ++p) comm_rank_of_process_.push_back(p);
            owner_.size_ = members_->logical_size();
            owner_.rank_ = members_->logical_of(process_);
            done_from_.assign(static_cast<std::size_t>(owner_.size_), 0);
            counts_for_.assign(static_cast<std::size_t>(owner_.size_), -1);
            logging_ = spares > 0;
            owner_.started_us_ = wall_clock_us();
            note_start();
        }
        {
            std::lock_guard lock(mutex_);
            if (!error.empty()) {
                start_error_ = error;
                state_ = state::failed;
            } else {
                state_ = state::running;
                role_ = owner_.rank_ < 0 ? role::spare : role::working;
            }
        }
        cv_.notify_all();
        if (!error.empty()) return;  // MPI, if initialised, stays so: the process is about to fail
        exchange_process_ids();
        loop();
        shut_down();
    });
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return state_ != state::starting; });
    if (state_ == state::failed) throw comm_error("rampart: MPI could not be started: " + start_error_);
    return role_ == role::spare;
}

void engine::impl::stop() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

engine::impl::role engine::impl::wait_while_spare() {
    std::unique_lock lock(mutex_);
    // A replacement starts its program once the recovery that chose it has
    // ended, with everything the survivors told it in hand.
    role_cv_.wait(lock, [this] { return role_ != role::spare && !recovering_; });
    return role_;
}

void engine::impl::push(op&& o) {
    {
        std::lock_guard lock(mutex_);
        if (state_ != state::running) throw comm_error("rampart::comm used after the runtime shut MPI down");
        inbox_.push_back(std::move(o));
    }
    cv_.notify_one();
}

engine_counters engine::impl::counters() const {
    engine_counters c;
    c.messages_sent = sent_.load();
    c.messages_received = received_.load();
    c.bytes_sent = bytes_sent_.load();
    c.bytes_received = bytes_received_.load();
    c.duplicates_dropped = duplicates_.load();
    c.malformed = malformed_.load();
    c.messages_resent = resent_.load();
    c.bytes_resent = resent_bytes_.load();
    c.send_log_messages = log_messages_.load();
    c.send_log_bytes = log_bytes_.load();
    c.send_log_trimmed = log_trimmed_.load();
    c.channels_lost = channels_lost_.load();
    clockid_t clock;
    timespec ts{};
    if (thread_.joinable() && pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock) == 0 &&
        clock_gettime(clock, &ts) == 0)
        c.cpu_seconds = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    return c;
}

// The MPI error, as text; the failure itself is handled by recovery.
std::string engine::impl::failure_text(int rc) {
    failure_seen_ = true;
    last_error_ = mpi_error_text(rc);
    return last_error_;
}

std::optional<std::vector<char>> engine::impl::receive_any(int tag, int& comm_source) {
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    // With ANY_SOURCE, ULFM reports a failed process that nobody has
    // acknowledged, and a revoked communicator, on this probe.
    int rc = MPI_Improbe(MPI_ANY_SOURCE, tag, comm_, &flag, &msg, &st);
    if (rc == MPI_SUCCESS && !flag) return std::nullopt;
    std::vector<char> bytes;
    if (rc == MPI_SUCCESS) {
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        bytes.resize(static_cast<std::size_t>(count));
        rc = MPI_Mrecv(bytes.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
        failure_text(rc);
        return std::nullopt;
    }
    comm_source = st.MPI_SOURCE;
    return bytes;
}

int engine::impl::comm_rank_of_logical(int logical) const {
    const int p = members_->process_of(logical);
    return p < 0 ? -1 : comm_rank_of_process_[static_cast<std::size_t>(p)];
}

int engine::impl::logical_of_comm_rank(int comm_rank) const {
    const auto it = std::find(comm_rank_of_process_.begin(), comm_rank_of_process_.end(), comm_rank);
    return it == comm_rank_of_process_.end()
               ? -1
               : members_->logical_of(static_cast<int>(it - comm_rank_of_process_.begin()));
}

// How the engine waits for messages. While operations are pending it polls
// MPI and yields the core between polls: with the rank bound to the cores of
// its workers (rampart-run does that), a yield hands the core to a worker at
// once, which timed sleeps do not (a short sleep costs more CPU on these
// machines than a yield, and a worker of another rank may take the core).
// After spin_polls empty polls in a row it pauses instead, with pauses that
// grow to max_pause_us, so that an engine with a core of its own does not
// spin. With nothing pending it still looks at MPI every idle_watch_us, for
// failures of other ranks and for the engine's own messages.
namespace {
constexpr int spin_polls = 1000;
constexpr int max_pause_us = 500;
constexpr int idle_watch_us = 2000;
constexpr auto watch_interval = std::chrono::milliseconds(1);
}  // namespace

void engine::impl::loop() {
    using namespace std::chrono;
    int idle = 0;
    for (;;) {
        std::deque<op> fresh;
        bool stopping = false;
        {
            std::unique_lock lock(mutex_);
            const bool nothing_pending = sends_.empty() && recvs_.empty() && service_recvs_.empty() &&
                                         pending_receives() == 0 && service_busy_.load() == 0;
            if (inbox_.empty() && !stop_) {
                auto ready = [this] { return !inbox_.empty() || stop_; };
                if (nothing_pending && world_size_ == 1) {
                    cv_.wait(lock, ready);  // nobody else can fail or write
                } else if (nothing_pending || self_done_ || role_ == role::spare) {
                    cv_.wait_for(lock, microseconds(idle_watch_us), ready);
                } else if (idle > spin_polls) {
                    cv_.wait_for(lock, microseconds(std::min(max_pause_us, 10 << std::min(idle - spin_polls - 1, 6))),
                                 ready);
                }
            }
            fresh.swap(inbox_);
            stopping = stop_;
        }
        bool progress = !fresh.empty();
        for (auto& o : fresh) accept(std::move(o));
        if (failing_) {
            if (failing_over()) break;
            std::this_thread::yield();
            continue;
        }
        progress |= progress_receives();
        progress |= test_sends();
        progress |= test_receives();
        if (!service_recvs_.empty()) progress |= test_service_receives();
        if (has_services_.load(std::memory_order_relaxed)) progress |= progress_services();
        if (world_size_ > 1 && (failure_seen_ || steady_clock::now() - last_watch_ > watch_interval)) {
            last_watch_ = steady_clock::now();
            progress |= watch();
        }
        if (failure_seen_) {
            recover();
            progress = true;
        }
        if (stopping && !self_done_ && sends_.empty() && recvs_.empty()) {
            fail_all_waiting("the runtime shut down before it arrived");
            announce_done();
            // The program has run to its end: said now, should this process
            // die before the job ends (written again, complete, at the end).
            if (role_ == role::working) owner_.write_report();
            if (const kill_order* k = owner_.my_kill_order(); k && k->at_end) owner_.die("end");
        }
        if ((self_done_ || role_ == role::spare) && everyone_done() && sends_.empty()) {
            if (final_agreement()) break;
            continue;  // a rank died at the very end: recover, then wait for everyone again
        }
        idle = progress ? 0 : idle + 1;
        if (!progress && idle <= spin_polls) std::this_thread::yield();
    }
}

void engine::impl::accept(op&& o) {
    std::visit(
        [&](auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, op_call>) {
                x.run();
            } else if constexpr (std::is_same_v<T, op_recv>) {
                accept_receive(std::move(x));
            } else if constexpr (std::is_same_v<T, op_service_recv>) {
                start_service_receive(std::move(x));
            } else if constexpr (std::is_same_v<T, op_service> || std::is_same_v<T, op_service_reply>) {
                // Asked for before a recovery that has ended since: its answer,
                // or the receive it answers, belongs to the old communicator.
                if (members_->process_of(x.peer) < 0 || x.epoch != recoveries_ended_.load()) return x.done(false);
                start_send(active_send(std::move(x), envelope{}));
            } else {
                accept_message(std::move(x));
            }
        },
        o);
}

namespace {
std::string lost_ranks_text(const std::vector<int>& lost) {
    return "failed ranks: " + recovery::detail::join_ranks(lost) + " (no spare rank replaced them)";
}
}  // namespace

void engine::impl::accept_receive(op_recv&& o) {
    if (lost_.size() > acknowledged_.load() || members_->process_of(o.peer) < 0) {
        // A rank is gone for good, so unless the program has said it
        // carries on without it (acknowledge_losses), a receive could
        // wait for a message its dead peer would have caused.
        o.target->fail(std::make_exception_ptr(
            comm_error("rampart: irecv from rank " + std::to_string(o.peer) + " failed: " + lost_ranks_text(lost_))));
        return;
    }
    channel& ch = channels_[{o.peer, o.tag}];
    ch.waiting.push_back(std::move(o));
    deliver_early(ch);
}

// The program's message (op_send) or a test's (op_raw, numbered by the test).
template <class Message>
void engine::impl::accept_message(Message&& o) {
    if (members_->process_of(o.peer) < 0) {
        o.done.set_exception(std::make_exception_ptr(
            comm_error("rampart: isend to rank " + std::to_string(o.peer) + " failed: " + lost_ranks_text(lost_))));
        return;
    }
    envelope env;
    env.kind = static_cast<std::uint16_t>(o.payload.kind);
    env.type_hash = o.payload.type;
    env.source = owner_.rank_;
    env.destination = o.peer;
    env.tag = o.tag;
    env.payload_bytes = o.payload.bytes;
    if constexpr (std::is_same_v<Message, op_raw>) {
        env.sequence = o.sequence;
    } else {
        env.sequence = next_send_sequence_[{o.peer, o.tag}]++;
        if (logging_) {
            log_.record(env, o.payload);
            update_log_counters();
        }
    }
    start_send(active_send(std::move(o), env));
}

void engine::impl::start_send(active_send&& s) {
    sends_.push_back(std::move(s));
    active_send& a = sends_.back();  // MPI keeps the address of its envelope
    const int rc = std::visit(
        [&](auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, op_service>) {
                std::vector<segment> pieces{{o.head.data(), o.head.size()}};
                pieces.insert(pieces.end(), o.data.begin(), o.data.end());
                return isend_pieces(a, pieces, comm_rank_of_logical(o.peer), service_tag_);
            } else if constexpr (std::is_same_v<T, op_service_reply>) {
                return isend_pieces(a, o.data, comm_rank_of_logical(o.peer), reply_tag(o.reply));
            } else if constexpr (std::is_same_v<T, op_control>) {
                return isend_message(a, o.payload, comm_rank_of_process_[static_cast<std::size_t>(o.process)],
                                     control_tag_);
            } else if constexpr (std::is_same_v<T, op_raw>) {
                if (o.bytes.empty()) return isend_message(a, o.payload, comm_rank_of_logical(o.peer), o.tag);
                return MPI_Isend(o.bytes.data(), static_cast<int>(o.bytes.size()), MPI_BYTE,
                                 comm_rank_of_logical(o.peer), o.tag, comm_, &a.request);
            } else {
                return isend_message(a, o.payload, comm_rank_of_logical(o.peer), o.tag);
            }
        },
        a.o);
    if (rc != MPI_SUCCESS) {
        finish_send(a, rc);
        sends_.pop_back();
    }
}

// An envelope and its payload: small ones copied together, others sent
// where they lie.
int engine::impl::isend_message(active_send& a, const outgoing_payload& payload, int dest, int tag) {
    if (payload.bytes <= small_payload) {
        std::memcpy(a.packed.data(), &a.env, sizeof(envelope));
        if (payload.bytes > 0) std::memcpy(a.packed.data() + sizeof(envelope), payload.data, payload.bytes);
        return MPI_Isend(a.packed.data(), static_cast<int>(sizeof(envelope) + payload.bytes), MPI_BYTE, dest, tag,
                         comm_, &a.request);
    }
    MPI_Datatype t = message_type(&a.env, payload.data, payload.bytes);
    const int rc = MPI_Isend(MPI_BOTTOM, 1, t, dest, tag, comm_, &a.request);
    MPI_Type_free(&t);
    return rc;
}

// A service message or reply: its pieces where they lie. One contiguous
// piece lets MPI copy it once, straight into the receiver's memory.
int engine::impl::isend_pieces(active_send& a, const std::vector<segment>& all, int dest, int tag) {
    if (dest < 0) return MPI_ERR_RANK;
    std::vector<segment> pieces;
    for (const segment& d : all)
        if (d.bytes > 0) pieces.push_back(d);
    if (pieces.size() <= 1)
        return MPI_Isend(pieces.empty() ? nullptr : pieces.front().data,
                         pieces.empty() ? 0 : static_cast<int>(pieces.front().bytes), MPI_BYTE, dest, tag, comm_,
                         &a.request);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = pieces_type(pieces, t);
    if (rc == MPI_SUCCESS) rc = MPI_Isend(MPI_BOTTOM, 1, t, dest, tag, comm_, &a.request);
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    return rc;
}

// A send is over: it left, or MPI failed it. A failed send that is in the log
// counts as sent: recovery sends it again if its receiver still needs it.
void engine::impl::finish_send(active_send& s, int rc) {
    if (rc != MPI_SUCCESS) failure_text(rc);
    std::visit(
        [&](auto& o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, op_service> || std::is_same_v<T, op_service_reply>) {
                if (rc == MPI_SUCCESS) {
                    if constexpr (std::is_same_v<T, op_service>) bytes_sent_ += o.head.size();
                    for (const segment& d : o.data) bytes_sent_ += d.bytes;
                }
                o.done(rc == MPI_SUCCESS);
            } else if constexpr (std::is_same_v<T, op_send> || std::is_same_v<T, op_raw>) {
                const bool logged = std::is_same_v<T, op_send> && logging_;
                if (rc != MPI_SUCCESS && !logged)
                    return o.done.set_exception(
                        std::make_exception_ptr(comm_error("rampart: isend failed: " + last_error_)));
                if (rc == MPI_SUCCESS) {
                    ++sent_;
                    bytes_sent_ += o.payload.bytes;
                }
                o.done.set_value();
            }  // else the engine's own (re-sends, control): no promise
        },
        s.o);
}

bool engine::impl::test_sends() {
    bool progress = false;
    for (auto it = sends_.begin(); it != sends_.end();) {
        int flag = 0;
        int rc = MPI_Test(&it->request, &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        finish_send(*it, rc);
        it = sends_.erase(it);
        progress = true;
    }
    return progress;
}

// ---- the engine object ----

namespace {
// Under mpiexec the runtime starts MPI at once, so that a spare rank waits
// before the program does anything.
void start_under_mpiexec() {
    if (distributed()) engine::get();
}
[[maybe_unused]] const bool start_hook_set = (rampart::set_runtime_start_hook(&start_under_mpiexec), true);

// Every isend and irecv asks for the engine: after the first call this is
// one atomic load, the mutex guards only the creation.
std::atomic<engine*> instance{nullptr};
}  // namespace

engine* engine::started() noexcept { return instance.load(std::memory_order_acquire); }

engine& engine::get() {
    if (engine* e = instance.load(std::memory_order_acquire)) return *e;
    static std::mutex m;
    std::lock_guard lock(m);
    if (!instance.load(std::memory_order_relaxed)) {
        // Registered first: it throws when no runtime is alive.
        auto started = std::make_shared<engine*>(nullptr);
        rampart::at_runtime_shutdown([started] {
            if (*started) (*started)->impl_->stop();
        });
        auto* e = new engine();
        e->config_ = read_environment_config();
        e->impl_ = new impl(*e);
        const bool spare = e->impl_->start(e->config_.spares);
        e->impl_->wait_for_process_ids();
        *started = e;
        if (e->impl_->wait_while_spare() == impl::role::released) {
            // The job ended without needing this spare. It never ran the
            // program, so it leaves without running any of it.
            e->impl_->stop();
            std::fflush(nullptr);
            ::_exit(0);
        }
        if (spare) e->started_us_ = wall_clock_us();  // the replacement starts the program now
        impl::install_failure_handlers();
        e->start_kill_timer();
        instance.store(e, std::memory_order_release);  // only once it is complete
    }
    return *instance.load(std::memory_order_relaxed);
}

void engine::post_send(int dest, int tag, outgoing_payload payload, promise<void> done) {
    impl_->push(impl::op_send{dest, tag, std::move(payload), std::move(done)});
}

void engine::post_recv(int source, int tag, std::unique_ptr<incoming_target> target) {
    impl_->push(impl::op_recv{source, tag, std::move(target)});
}

void engine::post_raw(int dest, int tag, std::uint64_t sequence, outgoing_payload payload, std::string raw_bytes,
                      promise<void> done) {
    impl_->push(impl::op_raw{dest, tag, sequence, std::move(payload), std::move(raw_bytes), std::move(done)});
}

engine_counters engine::counters() const { return impl_->counters(); }

channel_state engine::snapshot_channels() {
    return impl_->run_on_engine([this] { return impl_->snapshot(); });
}

void engine::restore_channels(const channel_state& state) {
    impl_->run_on_engine([this, &state] { impl_->restore(state); });
}

void engine::trim_send_log(const channel_state& upto) {
    impl_->run_on_engine([this, &upto] { impl_->trim(upto); });
}

std::vector<int> engine::lost_ranks() const {
    std::lock_guard lock(impl_->services_mutex_);
    return impl_->lost_shared_;
}

std::vector<int> engine::wait_for_losses(std::chrono::milliseconds timeout) {
    std::unique_lock lock(impl_->services_mutex_);
    impl_->losses_cv_.wait_for(lock, timeout, [&] { return impl_->lost_shared_.size() > impl_->acknowledged_.load(); });
    return impl_->lost_shared_;
}

std::vector<int> engine::acknowledge_losses() {
    std::lock_guard lock(impl_->services_mutex_);
    impl_->acknowledged_ = impl_->lost_shared_.size();
    return impl_->lost_shared_;
}

}  // namespace rampart::comm::detail
