#include <rampart/comm/detail/engine.hpp>
#include <rampart/task/detail/scheduler.hpp>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <rampart/task/config.hpp>
#include <rampart/task/counters.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace rampart::comm::detail {

std::string describe_mismatch(const envelope& e, std::uint64_t expected_type, std::size_t received_bytes) {
    std::string s = "rampart: message from rank " + std::to_string(e.source) + " with tag " + std::to_string(e.tag) +
                    " does not fit the receiver: ";
    if (e.type_hash != expected_type)
        s += "the sender's type differs from the receiver's";
    else
        s += "the payload has " + std::to_string(received_bytes) + " bytes, which is not the size of the receiver's type";
    return s;
}

namespace {

std::string mpi_error_text(int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return "MPI error " + std::to_string(rc) + " (" + std::string(text, static_cast<std::size_t>(len)) + ")";
}

// The ranks of `comm` that MPI knows to have failed.
std::vector<int> failed_rank_list(MPI_Comm comm) {
    std::vector<int> out;
#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
    MPI_Group failed, all;
    if (MPIX_Comm_get_failed(comm, &failed) != MPI_SUCCESS) return out;
    int n = 0;
    MPI_Group_size(failed, &n);
    if (n > 0) {
        std::vector<int> in(static_cast<std::size_t>(n));
        out.resize(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
        MPI_Comm_group(comm, &all);
        MPI_Group_translate_ranks(failed, n, in.data(), all, out.data());
        MPI_Group_free(&all);
    }
    MPI_Group_free(&failed);
#else
    (void)comm;
#endif
    return out;
}

// The ranks of `comm` that MPI knows to have failed ("1, 3"), or "".
std::string failed_ranks(MPI_Comm comm) {
    std::string text;
    for (int r : failed_rank_list(comm)) text += (text.empty() ? "" : ", ") + std::to_string(r);
    return text;
}

// A datatype that covers the envelope and the payload where they lie, so one
// message carries both without copying the payload.
MPI_Datatype message_type(const void* env, const void* payload, std::size_t payload_bytes) {
    MPI_Aint addr[2];
    MPI_Get_address(env, &addr[0]);
    int lengths[2] = {static_cast<int>(sizeof(envelope)), static_cast<int>(payload_bytes)};
    int blocks = 1;
    if (payload_bytes > 0) {
        MPI_Get_address(payload, &addr[1]);
        blocks = 2;
    }
    MPI_Datatype t;
    MPI_Type_create_hindexed(blocks, lengths, addr, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

}  // namespace

class engine::impl {
public:
    explicit impl(engine& owner) : owner_(owner) {}

    void start() {
        thread_ = std::thread([this] { run(); });
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return state_ != state::starting; });
        if (state_ == state::failed) throw comm_error("rampart: MPI could not be initialised: " + start_error_);
    }

    void stop() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

    struct op {
        enum class what { send, recv, raw };
        op() = default;
        explicit op(what k) : kind(k) {}
        what kind = what::send;
        int peer = 0;
        int tag = 0;
        outgoing_payload payload;
        promise<void> done;
        std::unique_ptr<incoming_target> target;
        std::uint64_t sequence = 0;  // raw only
        std::string raw;             // raw only: sent instead of envelope + payload
    };

    // The MPI error, and which ranks have died if that is why.
    std::string failure_text(int rc) {
        std::string text = mpi_error_text(rc);
        std::string dead = failed_ranks(comm_);
        if (!dead.empty()) {
            text += "; failed ranks: " + dead + " (no spare rank replaced them)";
            std::lock_guard lock(mutex_);
            dead_ranks_ = dead;
        }
        return text;
    }

    std::string dead_ranks() const {
        std::lock_guard lock(mutex_);
        return dead_ranks_;
    }

    void push(op&& o) {
        {
            std::lock_guard lock(mutex_);
            if (state_ != state::running) throw comm_error("rampart::comm used after the runtime shut MPI down");
            inbox_.push_back(std::move(o));
        }
        cv_.notify_one();
    }

    engine_counters counters() const {
        engine_counters c;
        c.messages_sent = sent_.load();
        c.messages_received = received_.load();
        c.bytes_sent = bytes_sent_.load();
        c.bytes_received = bytes_received_.load();
        c.duplicates_dropped = duplicates_.load();
        c.malformed = malformed_.load();
        clockid_t clock;
        timespec ts{};
        if (thread_.joinable() && pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &clock) == 0 &&
            clock_gettime(clock, &ts) == 0)
            c.cpu_seconds = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
        return c;
    }

private:
    enum class state { starting, running, failed, stopped };

    struct active_send {
        MPI_Request request = MPI_REQUEST_NULL;
        envelope env;
        op o;
    };
    struct channel {  // one (source, tag) pair on the receiving side
        std::deque<op> waiting;
        bool busy = false;  // a matched receive for waiting.front() is in flight
        std::uint64_t next_sequence = 0;
    };
    struct active_recv {
        MPI_Request request = MPI_REQUEST_NULL;
        std::pair<int, int> key;
        envelope env;
        std::size_t payload_bytes = 0;
        std::vector<char> scratch;  // payload that cannot go to the target
        bool fits = true;
        bool truncated = false;  // shorter than an envelope
    };

    void run() {
        int provided = 0;
        int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
            MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
            MPI_Comm_rank(comm_, &owner_.rank_);
            MPI_Comm_size(comm_, &owner_.size_);
            void* ub = nullptr;
            int found = 0;
            MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
            owner_.max_tag_ = found ? *static_cast<int*>(ub) : 32767;
        }
        {
            std::lock_guard lock(mutex_);
            if (rc != MPI_SUCCESS) {
                start_error_ = "MPI_Init_thread returned " + std::to_string(rc);
                state_ = state::failed;
            } else {
                state_ = state::running;
            }
        }
        cv_.notify_all();
        if (rc != MPI_SUCCESS) return;

        loop();
        shut_down();
    }

    // How the engine waits for messages: a few polls in a row after the last
    // progress, then pauses that grow to max_pause_us. Dataflow hides this
    // latency behind other tasks; the pauses keep the engine's CPU time low.
    static constexpr int spin_polls = 8;
    static constexpr int max_pause_us = 500;

    void loop() {
        using namespace std::chrono;
        int idle = 0;
        for (;;) {
            std::deque<op> fresh;
            bool stopping = false;
            {
                std::unique_lock lock(mutex_);
                const bool nothing_pending = sends_.empty() && recvs_.empty() && waiting_receives() == 0;
                if (inbox_.empty() && !stop_) {
                    if (nothing_pending) {
                        cv_.wait(lock, [this] { return !inbox_.empty() || stop_; });
                    } else if (idle > spin_polls) {
                        // Poll MPI with a growing pause so that an idle
                        // engine leaves the cores to the workers.
                        auto pause = microseconds(std::min(max_pause_us, 10 << std::min(idle - spin_polls, 8)));
                        cv_.wait_for(lock, pause, [this] { return !inbox_.empty() || stop_; });
                    }
                }
                fresh.swap(inbox_);
                stopping = stop_;
            }
            bool progress = !fresh.empty();
            for (auto& o : fresh) accept(std::move(o));
            // A probe for a message from a dead rank does not always report the
            // failure, so while waiting the engine asks ULFM which ranks died.
            if (idle > spin_polls && steady_clock::now() - last_failure_check_ > milliseconds(20)) {
                last_failure_check_ = steady_clock::now();
                progress |= fail_receives_from_dead_ranks();
            }
            progress |= progress_receives();
            progress |= test_sends();
            progress |= test_receives();
            if (failure_seen_) {
                failure_seen_ = false;
                progress |= fail_receives_from_dead_ranks();
            }
            idle = progress ? 0 : idle + 1;
            if (stopping && sends_.empty() && recvs_.empty()) break;
            if (!progress && idle <= spin_polls) std::this_thread::yield();
        }
    }

    // A rank died and no spare can take its place: the computation cannot
    // finish, and survivors may wait on messages their peers will never send
    // (the peers' tasks fail on the lost data). So every waiting receive, from
    // any rank, fails with an error that names the dead ranks.
    bool fail_receives_from_dead_ranks() {
        const std::string dead = failed_ranks(comm_);
        if (dead.empty()) return false;
        bool any = false;
        for (auto& [key, ch] : channels_) {
            if (ch.busy) continue;  // its message has arrived already
            while (!ch.waiting.empty()) {
                fail_front(ch, comm_error("rampart: irecv from rank " + std::to_string(key.first) +
                                          " failed: failed ranks: " + dead + " (no spare rank replaced them)"));
                any = true;
            }
        }
        std::lock_guard lock(mutex_);
        dead_ranks_ = dead;
        return any;
    }

    std::size_t waiting_receives() const {
        std::size_t n = 0;
        for (auto& [k, c] : channels_) n += c.waiting.size();
        return n;
    }

    void accept(op&& o) {
        if (o.kind == op::what::recv) {
            channels_[{o.peer, o.tag}].waiting.push_back(std::move(o));
            return;
        }
        active_send s;
        s.o = std::move(o);
        s.env.kind = static_cast<std::uint16_t>(s.o.payload.kind);
        s.env.type_hash = s.o.payload.type;
        s.env.source = owner_.rank_;
        s.env.destination = s.o.peer;
        s.env.tag = s.o.tag;
        s.env.payload_bytes = s.o.payload.bytes;
        s.env.sequence = s.o.kind == op::what::raw ? s.o.sequence : next_send_sequence_[{s.o.peer, s.o.tag}]++;
        sends_.push_back(std::move(s));
        active_send& a = sends_.back();
        int rc;
        if (a.o.kind == op::what::raw && !a.o.raw.empty()) {
            rc = MPI_Isend(a.o.raw.data(), static_cast<int>(a.o.raw.size()), MPI_BYTE, a.o.peer, a.o.tag, comm_,
                           &a.request);
        } else {
            MPI_Datatype t = message_type(&a.env, a.o.payload.data, a.o.payload.bytes);
            rc = MPI_Isend(MPI_BOTTOM, 1, t, a.o.peer, a.o.tag, comm_, &a.request);
            MPI_Type_free(&t);
        }
        if (rc != MPI_SUCCESS) {
            a.o.done.set_exception(std::make_exception_ptr(comm_error("rampart: isend failed: " + failure_text(rc))));
            sends_.pop_back();
        }
    }

    bool progress_receives() {
        bool progress = false;
        for (auto& [key, ch] : channels_) {
            if (ch.busy || ch.waiting.empty()) continue;
            int flag = 0;
            MPI_Message msg;
            MPI_Status st;
            int rc = MPI_Improbe(key.first, key.second, comm_, &flag, &msg, &st);
            if (rc != MPI_SUCCESS) {
                fail_front(ch, comm_error("rampart: irecv failed: " + failure_text(rc)));
                failure_seen_ = true;
                progress = true;
                continue;
            }
            if (!flag) continue;
            progress = true;
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            active_recv r;
            r.key = key;
            if (static_cast<std::size_t>(count) < sizeof(envelope)) {
                r.truncated = true;
                r.fits = false;
                r.scratch.resize(static_cast<std::size_t>(count));
                r.payload_bytes = 0;
                recvs_.push_back(std::move(r));
                active_recv& a = recvs_.back();
                MPI_Imrecv(a.scratch.data(), count, MPI_BYTE, &msg, &a.request);
            } else {
                r.payload_bytes = static_cast<std::size_t>(count) - sizeof(envelope);
                void* dst = ch.waiting.front().target->prepare(r.payload_bytes);
                if (!dst) {
                    r.fits = false;
                    r.scratch.resize(r.payload_bytes);
                }
                recvs_.push_back(std::move(r));
                active_recv& a = recvs_.back();
                void* where = a.fits ? dst : static_cast<void*>(a.scratch.data());
                MPI_Datatype t = message_type(&a.env, where, a.payload_bytes);
                MPI_Imrecv(MPI_BOTTOM, 1, t, &msg, &a.request);
                MPI_Type_free(&t);
            }
            ch.busy = true;
        }
        return progress;
    }

    bool test_sends() {
        bool progress = false;
        for (auto it = sends_.begin(); it != sends_.end();) {
            int flag = 0;
            int rc = MPI_Test(&it->request, &flag, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                it->o.done.set_exception(std::make_exception_ptr(comm_error("rampart: isend failed: " + failure_text(rc))));
            } else if (flag) {
                ++sent_;
                bytes_sent_ += it->o.payload.bytes;
                it->o.done.set_value();
            } else {
                ++it;
                continue;
            }
            it = sends_.erase(it);
            progress = true;
        }
        return progress;
    }

    bool test_receives() {
        bool progress = false;
        for (auto it = recvs_.begin(); it != recvs_.end();) {
            int flag = 0;
            int rc = MPI_Test(&it->request, &flag, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS && !flag) {
                ++it;
                continue;
            }
            channel& ch = channels_[it->key];
            ch.busy = false;
            progress = true;
            if (rc != MPI_SUCCESS) {
                fail_front(ch, comm_error("rampart: irecv failed: " + failure_text(rc)));
                failure_seen_ = true;
            } else {
                complete(ch, *it);
            }
            it = recvs_.erase(it);
        }
        return progress;
    }

    void complete(channel& ch, active_recv& r) {
        const envelope& e = r.env;
        if (r.truncated) {
            ++malformed_;
            return fail_front(ch, message_error("rampart: malformed message: " + std::to_string(r.scratch.size()) +
                                                " bytes, less than the " + std::to_string(sizeof(envelope)) +
                                                "-byte envelope"));
        }
        if (e.magic != envelope::magic_value || e.version != envelope::version_value) {
            ++malformed_;
            return fail_front(ch, message_error("rampart: malformed message: not a rampart envelope"));
        }
        if (e.payload_bytes != r.payload_bytes) {
            ++malformed_;
            return fail_front(ch, message_error("rampart: malformed message: envelope announces " +
                                                std::to_string(e.payload_bytes) + " payload bytes, " +
                                                std::to_string(r.payload_bytes) + " arrived"));
        }
        if (e.sequence < ch.next_sequence) {
            ++duplicates_;  // already delivered: the receiver keeps waiting
            return;
        }
        ch.next_sequence = e.sequence + 1;
        ++received_;
        bytes_received_ += r.payload_bytes;
        op o = std::move(ch.waiting.front());
        ch.waiting.pop_front();
        if (!r.fits) {
            o.target->fail(std::make_exception_ptr(message_error(describe_mismatch(e, o.target->expected_type(), r.payload_bytes))));
            return;
        }
        o.target->deliver(e);
    }

    template <class Error>
    void fail_front(channel& ch, Error&& error) {
        op o = std::move(ch.waiting.front());
        ch.waiting.pop_front();
        o.target->fail(std::make_exception_ptr(std::forward<Error>(error)));
    }

    void shut_down() {
        for (auto& [key, ch] : channels_)
            while (!ch.waiting.empty())
                fail_front(ch, comm_error("rampart: the runtime shut down before a message from rank " +
                                          std::to_string(key.first) + " with tag " + std::to_string(key.second) +
                                          " arrived"));
        {
            std::lock_guard lock(mutex_);
            state_ = state::stopped;
        }
        // A final agreement tells every rank that all are done. After a rank
        // died, MPI_Finalize hangs in a good share of runs (ULFM.md), so the
        // process then ends without it, keeping the program's exit code.
        // Otherwise Finalize runs under a watchdog that ends the process with
        // success should it hang all the same.
#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
        int flag = 1;
        MPIX_Comm_agree(comm_, &flag);
#else
        MPI_Barrier(comm_);
#endif
        if (!failed_rank_list(comm_).empty()) return;
        std::thread([] {
            std::this_thread::sleep_for(std::chrono::seconds(5));
            ::_exit(0);
        }).detach();
        MPI_Finalize();
    }

    engine& owner_;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<op> inbox_;
    bool stop_ = false;
    state state_ = state::starting;
    std::string start_error_;
    std::string dead_ranks_;  // as MPI last reported them

    // Owned by the engine thread only.
    MPI_Comm comm_ = MPI_COMM_NULL;
    // MPI holds the addresses of envelopes and buffers of operations in
    // flight, so these must never move: lists, not deques or vectors.
    std::list<active_send> sends_;
    std::list<active_recv> recvs_;
    std::map<std::pair<int, int>, channel> channels_;
    std::map<std::pair<int, int>, std::uint64_t> next_send_sequence_;
    std::chrono::steady_clock::time_point last_failure_check_{};
    bool failure_seen_ = false;  // an MPI error that may mean a dead rank

    std::atomic<std::uint64_t> sent_{0}, received_{0}, bytes_sent_{0}, bytes_received_{0}, duplicates_{0},
        malformed_{0};
};

engine& engine::get() {
    // Every isend and irecv asks for the engine: after the first call this is
    // one atomic load, the mutex guards only the creation.
    static std::atomic<engine*> instance{nullptr};
    if (engine* e = instance.load(std::memory_order_acquire)) return *e;
    static std::mutex m;
    std::lock_guard lock(m);
    if (!instance.load(std::memory_order_relaxed)) {
        auto& sched = rampart::detail::scheduler::get();  // throws without a runtime
        auto* e = new engine();
        e->impl_ = new impl(*e);
        e->impl_->start();
        e->config_ = read_environment_config();
        for (const auto& k : e->config_.kills)
            if (k.rank == e->rank_ && k.seconds)
                std::thread([s = *k.seconds] {
                    std::this_thread::sleep_for(std::chrono::duration<double>(s));
                    std::raise(SIGKILL);  // a crash: no cleanup, peers find out through MPI
                }).detach();
        sched.on_shutdown([e] {
            e->write_report();
            e->impl_->stop();
        });
        instance.store(e, std::memory_order_release);  // only once it is complete
    }
    return *instance.load(std::memory_order_relaxed);
}

void engine::post_send(int dest, int tag, outgoing_payload payload, promise<void> done) {
    impl::op o(impl::op::what::send);
    o.peer = dest;
    o.tag = tag;
    o.payload = std::move(payload);
    o.done = std::move(done);
    impl_->push(std::move(o));
}

void engine::post_recv(int source, int tag, std::unique_ptr<incoming_target> target) {
    impl::op o(impl::op::what::recv);
    o.peer = source;
    o.tag = tag;
    o.target = std::move(target);
    impl_->push(std::move(o));
}

void engine::post_raw(int dest, int tag, std::uint64_t sequence, outgoing_payload payload, std::string raw_bytes,
                      promise<void> done) {
    impl::op o(impl::op::what::raw);
    o.peer = dest;
    o.tag = tag;
    o.sequence = sequence;
    o.payload = std::move(payload);
    o.raw = std::move(raw_bytes);
    o.done = std::move(done);
    impl_->push(std::move(o));
}

engine_counters engine::counters() const { return impl_->counters(); }

void engine::report_iteration(std::uint64_t iteration) {
    iteration_.store(iteration, std::memory_order_relaxed);
    for (const auto& k : config_.kills)
        if (k.rank == rank_ && k.iteration && *k.iteration == iteration) std::raise(SIGKILL);
}

void engine::write_report() {
    if (config_.report.empty()) return;
    auto c = counters();
    std::string path = config_.report + "." + std::to_string(rank_) + ".json";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f,
                     "{\"rank\":%d,\"size\":%d,\"iteration\":%llu,\"messages_sent\":%llu,\"messages_received\":%llu,"
                     "\"bytes_sent\":%llu,\"bytes_received\":%llu,\"duplicates_dropped\":%llu,\"malformed\":%llu,"
                     "\"engine_cpu_seconds\":%.6f,\"failed_ranks\":\"%s\",\"tasks\":%s}\n",
                     rank_, size_, static_cast<unsigned long long>(iteration_.load()),
                     static_cast<unsigned long long>(c.messages_sent), static_cast<unsigned long long>(c.messages_received),
                     static_cast<unsigned long long>(c.bytes_sent), static_cast<unsigned long long>(c.bytes_received),
                     static_cast<unsigned long long>(c.duplicates_dropped), static_cast<unsigned long long>(c.malformed),
                     c.cpu_seconds, impl_->dead_ranks().c_str(), rampart::read_counters().to_json().c_str());
        std::fclose(f);
    }
}

}  // namespace rampart::comm::detail
