#pragma once
// The engine's state and its MPI work, shared by engine.cpp (messages) and
// engine_recovery.cpp (crash recovery and shutdown). Only the engine thread
// touches the MPI side; other threads go through push() and the mutex.

#include <rampart/comm/detail/engine.hpp>

#include <mpi.h>
#include <nlohmann/json_fwd.hpp>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "../recovery/membership.hpp"
#include "../recovery/send_log.hpp"
#include "wire.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
#define RAMPART_HAVE_ULFM 1
#else
#define RAMPART_HAVE_ULFM 0
#endif

namespace rampart::comm::detail {

std::string mpi_error_text(int rc);
/// Wall-clock microseconds, comparable between processes of one machine.
std::int64_t wall_clock_us();

class engine::impl {
public:
    explicit impl(engine& owner) : owner_(owner) {}

    /// Starts the engine thread, which initialises MPI; returns once it runs,
    /// telling whether this process is a spare.
    bool start(int spares);
    void stop();

    /// How this process takes part: running a logical rank, waiting as a
    /// spare, or released at the end of the job without having been needed.
    enum class role { working, spare, released };
    /// Blocks while this process is an idle spare.
    role wait_while_spare();

    // What other threads ask of the engine thread, one kind a struct. Each
    // can be abandoned: the engine ends before carrying it out.
    struct op_send {   // the program's message: numbered here, logged when spares exist
        int peer = 0;  // logical rank
        int tag = 0;
        outgoing_payload payload;
        promise<void> done;
        void abandon(const std::exception_ptr& e) { done.set_exception(e); }
    };
    struct op_raw {  // sent with the given sequence, or as the given bytes (tests of malformed input)
        int peer = 0;
        int tag = 0;
        std::uint64_t sequence = 0;
        outgoing_payload payload;
        std::string bytes;  // when not empty: sent instead of envelope + payload
        promise<void> done;
        void abandon(const std::exception_ptr& e) { done.set_exception(e); }
    };
    struct op_recv {
        int peer = 0;
        int tag = 0;
        std::unique_ptr<incoming_target> target;
        void abandon(const std::exception_ptr& e) { target->fail(e); }
    };
    struct op_service {  // a service's message: its prefix and head, then data where it lies
        int peer = 0;
        std::vector<char> head;
        std::vector<segment> data;
        std::function<void(bool)> done;
        std::uint64_t epoch = 0;  // the recoveries ended when it was asked for
        void abandon(const std::exception_ptr&) { done(false); }
    };
    struct op_service_reply {  // bare bytes, on the reply's own tag
        int peer = 0;
        std::uint64_t reply = 0;
        std::vector<segment> data;
        std::function<void(bool)> done;
        std::uint64_t epoch = 0;
        void abandon(const std::exception_ptr&) { done(false); }
    };
    struct op_service_recv {  // a reply expected straight into `into`
        int service = 0;
        int peer = 0;
        std::uint64_t reply = 0;
        std::vector<receive_segment> into;
        std::function<void(bool, std::size_t)> done;
        std::uint64_t epoch = 0;
        void abandon(const std::exception_ptr&) { done(false, 0); }
    };
    struct op_call {  // runs on the engine thread; abandoned, where the engine ends
        std::function<void()> run;
        void abandon(const std::exception_ptr&) { run(); }
    };
    using op = std::variant<op_send, op_raw, op_recv, op_service, op_service_reply, op_service_recv, op_call>;

    void push(op&& o);
    /// Runs f on the engine thread and waits for it (not from the engine
    /// thread); what f throws is thrown here.
    template <class F>
    auto run_on_engine(F f) -> decltype(f());
    engine_counters counters() const;

    /// One recovery, for the report.
    struct recovery_record {
        std::vector<int> dead;                          // logical ranks
        std::vector<int> dead_spares;                   // processes
        std::vector<std::pair<int, int>> replacements;  // (logical rank, process)
        std::vector<int> lost;
        std::int64_t detect_us = 0, agreed_us = 0, counted_us = 0, resumed_us = 0;  // counted: counts exchanged
        int rounds = 0;
        std::uint64_t resent_messages = 0, resent_bytes = 0;
    };
    /// The report's JSON fields of the recovery layer (engine thread, at the end):
    /// the send log, the logical ranks lost for good, every recovery.
    /// The recovery part of this rank's report (processes killed, the send
    /// log, lost ranks, each recovery with its phase times), added to `report`.
    void add_recovery_report(nlohmann::ordered_json& report) const;

    /// How this process's part of the job ended, for the report.
    enum class ending { normal, failed, stopped };
    /// The program runs: the runtime has not begun to shut the engine down.
    bool program_running() const;
    /// engine_ending.cpp: this rank's program failed. Tells every other
    /// process to stop, and returns once they have (or after a deadline);
    /// the engine thread has ended then, without MPI_Finalize.
    void fail_program(std::exception_ptr cause);
    /// std::terminate and exit() while the program runs end the job too.
    static void install_failure_handlers();

private:
    enum class state { starting, running, failed, stopped };

    // A message with at most this many payload bytes travels as one copy of
    // envelope and payload: two small copies cost less than building and
    // freeing an MPI datatype on each side.
    static constexpr std::size_t small_payload = 256;
    using packed_message = std::array<char, sizeof(envelope) + small_payload>;

    // The engine's own sends, besides those asked for.
    struct op_resend {  // from the send log, at a recovery
        int peer = 0;
        int tag = 0;
        outgoing_payload payload;
        void abandon(const std::exception_ptr&) {}
    };
    struct op_control {  // to a process: spares have no logical rank
        int process = 0;
        outgoing_payload payload;
        void abandon(const std::exception_ptr&) {}
    };
    using outgoing = std::variant<op_send, op_raw, op_resend, op_control, op_service, op_service_reply>;

    struct active_send {
        active_send(outgoing what, const envelope& e) : env(e), o(std::move(what)) {}
        MPI_Request request = MPI_REQUEST_NULL;
        envelope env;  // none for service messages
        outgoing o;
        packed_message packed;
    };
    struct early_message {  // arrived before its receive was posted
        envelope env;
        std::vector<char> payload;
    };
    struct channel {  // one (source, tag) pair on the receiving side
        std::deque<op_recv> waiting;
        bool busy = false;                // a matched receive is in flight
        std::uint64_t next_sequence = 0;  // messages delivered to the program
        // The sequence of the next message that will arrive from the source:
        // one past the last that arrived, or what the source said at a
        // recovery (it re-sends from there, or, replaced, starts from 0) or
        // at a restore (a replacement resumes its numbering at a checkpoint).
        // Messages on a channel arrive in order, so while it is below
        // next_sequence the source will send those already delivered again:
        // duplicates, received and dropped even when no receive waits (a
        // program that has ended posts none, and a large duplicate would
        // block its sender forever). Above next_sequence (and an early
        // message), messages are missing that no process will send: lost.
        std::uint64_t stream_next = 0;
        bool lost_reported = false;
        // At most one: the channel is not probed again until it is delivered.
        std::optional<early_message> early;

        std::uint64_t duplicates_due() const { return stream_next < next_sequence ? next_sequence - stream_next : 0; }
        /// The messages from next_sequence on that are still to arrive.
        std::uint64_t held() const { return next_sequence + (early ? 1 : 0); }
        bool lost() const { return stream_next > held(); }
    };
    struct active_recv {
        MPI_Request request = MPI_REQUEST_NULL;
        std::pair<int, int> key;
        envelope env;
        std::size_t payload_bytes = 0;
        std::vector<char> scratch;      // payload that cannot go to the target
        void* target_memory = nullptr;  // where the target wants the payload
        bool fits = true;
        bool truncated = false;  // shorter than an envelope
        bool is_packed = false;  // small: arrived in `packed`, copied out on completion
        packed_message packed;
    };

    // A service reply expected from (source, tag). It is probed for, not
    // received blindly: only once its size is known to fit does MPI get the
    // memory (a receive posted into memory too small for the message is
    // written past its end by single-copy transfers).
    struct expected_reply {
        int service = 0;
        int source = 0;  // logical rank
        int tag = 0;
        std::vector<receive_segment> into;
        std::size_t capacity = 0;
        std::function<void(bool, std::size_t)> done;
        bool matched = false;  // then `request` receives it
        MPI_Request request = MPI_REQUEST_NULL;
        std::size_t bytes = 0;      // its size
        std::vector<char> scratch;  // a reply too long for `into` lands here
    };

    // engine.cpp: messages
    void note_start() const;
    void die_before_mpi_if_ordered() const;
    void watch_mpi_start();
    void run();
    void loop();
    void accept(op&& o);
    void accept_receive(op_recv&& o);
    template <class Message>
    void accept_message(Message&& o);
    void start_send(active_send&& s);
    int isend_message(active_send& a, const outgoing_payload& payload, int dest, int tag);
    int isend_pieces(active_send& a, const std::vector<segment>& pieces, int dest, int tag);
    bool progress_receives();
    bool test_sends();
    bool test_receives();
    /// The next whole message with `tag` from any process, or nothing (none
    /// waits, or MPI failed: failure_seen_ is set then).
    std::optional<std::vector<char>> receive_any(int tag, int& comm_source);
    bool progress_services();
    void start_service_receive(op_service_recv&& o);
    bool test_service_receives();
    int receive_reply(expected_reply& r, MPI_Message& msg, MPI_Status& st);
    void fail_unmatched_replies();
    int reply_tag(std::uint64_t reply) const {
        return reply_tag_base_ + static_cast<int>(reply % static_cast<std::uint64_t>(reply_tags_));
    }
    void notify_services(const std::vector<int>& replaced, const std::vector<int>& lost);
    bool exchange_service_states();
    void finish_send(active_send& s, int rc);
    void complete(channel& ch, active_recv& r);
    void fail_front(channel& ch, std::exception_ptr error);
    void fail_all_waiting(const std::string& why);
    std::size_t pending_receives() const;
    void deliver_early(channel& ch);
    /// The channel lost messages for good: reports it once and fails its
    /// waiting receives.
    void fail_lost(const std::pair<int, int>& key, channel& ch);
    std::string lost_text(const std::pair<int, int>& key, const channel& ch) const;
    op_recv take_front(channel& ch, const envelope& e, std::size_t payload_bytes);
    static void fail_mismatch(op_recv& o, const envelope& e, std::size_t payload_bytes);
    int comm_rank_of_logical(int logical) const;
    int logical_of_comm_rank(int comm_rank) const;  // -1: a spare, or not in comm_
    std::string failure_text(int rc);
    void kill_self();

    // engine_recovery.cpp: failures, recovery, the end of the job
    bool watch();
    void recover();
    void revoke();
    void drain();
    void shrink_and_agree();
    void shrink_and_take_over(recovery_record& r);
    bool exchange_and_resend(recovery_record& r);
    std::vector<channel_counts> my_channel_counts(std::size_t processes) const;
    bool exchange_channel_counts(std::vector<channel_counts>& from);
    bool exchange_counts_until_agreed(bool ok, std::vector<MPI_Request>& sends, std::vector<channel_counts>& from);
    bool take_waiting_counts(std::vector<channel_counts>& from);
    int join_agreement(int& flag, MPI_Request& request);
    void take_counts(int source, const std::vector<std::uint64_t>& words, std::vector<channel_counts>& from);
    void resume_receive_streams(const std::vector<channel_counts>& from);
    void resend_unreceived(const std::vector<channel_counts>& from, recovery_record& r);
    void send_control(int process, std::uint64_t what, std::vector<std::uint64_t> words = {});
    void on_control(const control_message& m);
    void resend(const recovery::detail::logged_message& m);
    void become(int logical);
    void maybe_kill_during_recovery();
    /// Checks with an agreement that a collective step of the recovery
    /// succeeded on every process before its result is used: some collective
    /// components return success with an unwritten buffer when a process dies
    /// during the call.
    bool confirmed(bool ok);

    // engine_ending.cpp: the end of the job, normal or not
    void announce_done();
    void on_done(const control_message& m, int comm_source);
    bool everyone_done() const;
    /// A receive whose source's program has ended, having sent all it ever
    /// will on the channel: it fails with a comm_error naming source and tag.
    bool ended_for_good(const std::pair<int, int>& key, const channel& ch) const;
    void fail_ended(const std::pair<int, int>& key, channel& ch);
    bool final_agreement();
    void begin_failing();
    /// While failing: true once every other process stopped or the deadline passed.
    bool failing_over();
    void on_failed(int failed_rank, int comm_source);
    [[noreturn]] void stop_for(int failed_rank, int comm_source);
    void fail_everything(const std::exception_ptr& error);
    void shut_down();

    // engine_processes.cpp: the processes of the job, and hung ones
    void exchange_process_ids();
    void gather_process_ids();
    /// Waits until exchange_process_ids has ended (well or not).
    void wait_for_process_ids();
    std::vector<int> number_nodes() const;
    void divide_tags();
    /// Kills (SIGKILL) those of `processes` that run on this host: a hung
    /// process that MPI has declared dead must end to be recovered from.
    void kill_processes(const std::vector<int>& processes);
    std::vector<int> failed_processes();

    // engine_recovery.cpp: checkpoints (on the engine thread)
    channel_state snapshot() const;
    void restore(const channel_state& state);
    void trim(const channel_state& upto);
    void check_state_rank(const channel_state& state, const char* what) const;
    void update_log_counters();

    engine& owner_;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::condition_variable cv_;       // inbox, state
    std::condition_variable role_cv_;  // a spare's main thread waits on it
    std::deque<op> inbox_;
    bool stop_ = false;
    state state_ = state::starting;
    role role_ = role::working;
    std::string start_error_;
    std::atomic<bool> mpi_started_{false};  // MPI_Init has returned

    // Owned by the engine thread only.
    MPI_Comm comm_ = MPI_COMM_NULL;
    int process_ = 0;  // rank in MPI_COMM_WORLD
    int world_size_ = 1;
    int control_tag_ = 0;
    int service_tag_ = 0;                      // one below the control tag
    int counts_tag_ = 0;                       // one below the service tag: channel counts at a recovery
    int reply_tag_base_ = 0, reply_tags_ = 1;  // the tags below the service tag: service replies
    std::optional<recovery::detail::membership> members_;
    std::vector<int> comm_rank_of_process_;  // -1: not in comm_
    bool logging_ = false;                   // spares exist, so sends are kept for re-sending
    recovery::detail::send_log log_;
    // MPI holds the addresses of envelopes and buffers of operations in
    // flight, so these must never move: lists, not deques or vectors.
    std::list<active_send> sends_;
    std::list<active_recv> recvs_;
    std::list<expected_reply> service_recvs_;
    std::map<std::pair<int, int>, channel> channels_;
    std::map<std::pair<int, int>, std::uint64_t> next_send_sequence_;
    std::chrono::steady_clock::time_point last_watch_{};
    bool recovering_ = false;      // under mutex_: a recovery is under way
    bool failure_seen_ = false;    // an MPI error that may mean a dead process
    std::string last_error_;       // its text
    std::vector<int> lost_;        // logical ranks dead with no spare left
    std::vector<char> done_from_;  // per logical rank: it announced the end of its program
    bool self_done_ = false;
    // Per (source, tag): the messages a source whose program has ended sent
    // on the channel (valid while done_from_[source]; absent: none).
    std::map<std::pair<int, int>, std::uint64_t> final_count_;
    std::vector<int> counts_for_;  // per source: the logical rank its final counts were sent for
    ending ending_ = ending::normal;
    int stopped_by_ = -1;             // the logical rank whose program failed
    bool failing_ = false;            // this rank's program failed: waiting for the others to stop
    std::exception_ptr cause_;        // under mutex_: why, when known
    bool failing_requested_ = false;  // under mutex_
    std::vector<int> awaiting_stop_;  // processes that have not yet answered control_failed
    std::chrono::steady_clock::time_point failing_deadline_{};
    std::int64_t failed_at_us_ = 0;  // wall clock: when this rank's program failed
    // Per process (rank in MPI_COMM_WORLD): its pid and a hash of its host
    // name, exchanged at start-up (0: unknown).
    std::vector<std::int64_t> pid_of_process_;
    std::vector<std::uint64_t> host_of_process_;
    std::vector<std::uint64_t> node_of_process_;  // the host, or a count of RAMPART_RANKS_PER_NODE
    bool ids_exchanged_ = false;  // under mutex_
    std::vector<std::pair<int, std::int64_t>> killed_;  // (process, wall-clock µs) killed by this one
    std::vector<recovery_record> recoveries_;
    bool recovery_kill_checked_ = false;  // a kill order "during recovery" applies once

    // Services: registered from any thread, called on the engine thread.
    mutable std::mutex services_mutex_;
    std::map<int, service*> services_;
    int next_service_ = 1;
    struct early_service_message {
        int source = 0;
        std::uint64_t epoch = 0;  // recoveries ended when it arrived: older ones are dropped
        std::vector<char> bytes;
    };
    std::map<int, std::vector<early_service_message>> early_services_;
    std::map<int, std::vector<std::vector<char>>> service_states_;  // number -> by logical rank, last recovery
    // From the moment a recovery takes the services' states until their
    // on_recovery: a service attached then would miss both (services_cv_
    // when it ends).
    bool states_pending_ = false;
    std::condition_variable services_cv_;
    mutable std::mutex incarnations_mutex_;  // a leaf: read from on_recovery too
    std::vector<int> incarnations_;          // by logical rank, at the last recovery
    std::atomic<bool> has_services_{false};
    std::atomic<int> service_busy_{0};
    std::vector<int> lost_shared_;       // a copy of lost_ for other threads, under services_mutex_
    std::condition_variable losses_cv_;  // lost_shared_ grew (with services_mutex_)
    // How many of lost_shared_ the program has acknowledged: receives from
    // the living work again once every loss is acknowledged.
    std::atomic<std::size_t> acknowledged_{0};
    std::atomic<std::uint64_t> recoveries_ended_{0};  // alike on every process, spares included

    std::atomic<std::uint64_t> sent_{0}, received_{0}, bytes_sent_{0}, bytes_received_{0}, duplicates_{0},
        malformed_{0}, resent_{0}, resent_bytes_{0}, log_messages_{0}, log_bytes_{0}, log_trimmed_{0},
        channels_lost_{0};

    friend class engine;
};

template <class F>
auto engine::impl::run_on_engine(F f) -> decltype(f()) {
    using R = decltype(f());
    auto p = std::make_shared<promise<R>>();  // std::function copies what it holds
    auto result = p->get_future();
    op_call o;
    o.run = [f = std::move(f), p]() mutable {
        try {
            if constexpr (std::is_void_v<R>) {
                f();
                p->set_value();
            } else {
                p->set_value(f());
            }
        } catch (...) {
            p->set_exception(std::current_exception());
        }
    };
    push(std::move(o));
    return result.get();
}

// A datatype that covers the envelope and the payload where they lie, so one
// message carries both without copying the payload.
inline MPI_Datatype message_type(const void* env, const void* payload, std::size_t payload_bytes) {
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

// A datatype that covers pieces of memory where they lie (used with
// MPI_BOTTOM), skipping empty ones; MPI's error code, and `t` to free.
template <class Piece>
inline int pieces_type(const std::vector<Piece>& pieces, MPI_Datatype& t) {
    std::vector<MPI_Aint> where;
    std::vector<int> lengths;
    for (const Piece& d : pieces) {
        if (d.bytes == 0) continue;
        MPI_Get_address(d.data, &where.emplace_back());
        lengths.push_back(static_cast<int>(d.bytes));
    }
    int rc = MPI_Type_create_hindexed(static_cast<int>(where.size()), lengths.data(), where.data(), MPI_BYTE, &t);
    if (rc != MPI_SUCCESS) {
        t = MPI_DATATYPE_NULL;
        return rc;
    }
    return MPI_Type_commit(&t);
}

}  // namespace rampart::comm::detail
