#pragma once
// The communication engine: one thread per process that makes every MPI call
// (MPI_THREAD_FUNNELED). Other threads hand it operations through a queue and
// get results through promises. This header keeps MPI itself out of sight.

#include <rampart/comm/serialization.hpp>
#include <rampart/task/config.hpp>
#include <rampart/task/future.hpp>

#include <atomic>
#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace rampart::comm::detail {

/// What the engine counted, for reports and tests.
struct engine_counters {
    std::uint64_t messages_sent = 0;
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t duplicates_dropped = 0;
    std::uint64_t malformed = 0;
    std::uint64_t messages_resent = 0;  ///< sent again after a crash, from the send log
    std::uint64_t bytes_resent = 0;
    std::uint64_t send_log_messages = 0;  ///< held in the send log now (kept only when spares exist)
    std::uint64_t send_log_bytes = 0;     ///< their envelopes and payloads
    std::uint64_t send_log_trimmed = 0;   ///< messages dropped from the log by trim_send_log
    /// Receive channels that lost messages for good: no process can send them
    /// any more (a send log trimmed past them, a checkpoint that does not
    /// match, or no send log at all). Their receives fail with a comm_error.
    std::uint64_t channels_lost = 0;
    double cpu_seconds = 0;  ///< CPU time of the engine thread: the cost of communication
};

/// How far the numbered channels of one rank have gone: per (dest, tag) the
/// messages it has sent, per (source, tag) the messages its program has
/// received. Taken by engine::snapshot_channels at a checkpoint, given back
/// to a replacement by engine::restore_channels, and used to trim the send
/// log (engine::trim_send_log). A plain value: to_bytes() and from_bytes()
/// turn it into bytes and back, for the store.
struct channel_state {
    struct count {
        std::int32_t peer = 0;  ///< logical rank: the destination of `sent`, the source of `received`
        std::int32_t tag = 0;
        std::uint64_t messages = 0;
        friend bool operator==(const count&, const count&) = default;
    };
    std::int32_t rank = -1;       ///< the logical rank whose channels these are
    std::vector<count> sent;      ///< sorted by (peer, tag), one entry per channel
    std::vector<count> received;  ///< sorted by (peer, tag), one entry per channel
    friend bool operator==(const channel_state&, const channel_state&) = default;

    /// A self-describing byte form (magic, version, counts; the host's byte
    /// order, as every process of one job shares it).
    std::vector<char> to_bytes() const;
    /// The inverse of to_bytes(). Bytes that are not one (truncated, too
    /// long, another magic or version, negative ranks or tags, entries out of
    /// order or repeated) are a rampart::invalid_argument naming the problem.
    static channel_state from_bytes(const void* data, std::size_t bytes);
    static channel_state from_bytes(const std::vector<char>& bytes) { return from_bytes(bytes.data(), bytes.size()); }
};

/// A protocol of the runtime's own on top of MPI (the replicated store):
/// byte messages between logical ranks on a tag of their own, outside the
/// numbered, logged channels of isend/irecv. Its calls come on the engine
/// thread and must not block.
class service {
public:
    virtual ~service() = default;
    /// A message from logical rank `source`; its bytes start at `offset`.
    virtual void on_message(int source, std::vector<char>&& bytes, std::size_t offset) = 0;
    /// A recovery ended. `replaced` logical ranks run on a new process now
    /// (what they held is gone); `lost` logical ranks have no process any
    /// more. `states[q]` is what recovery_state() gave on logical rank q in
    /// this recovery, the same on every process (empty where the service
    /// does not exist, as on a replacement that has not created it yet).
    /// Messages in flight during the recovery may be lost: send again what
    /// still lacks an answer.
    virtual void on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                             const std::vector<std::vector<char>>& states) = 0;
    /// What this rank's service tells the others at each recovery, once the
    /// survivors have agreed on who died (so that all decide from the same
    /// facts, with no further message). Called on the engine thread.
    virtual std::vector<char> recovery_state() { return {}; }
    /// Its number (engine::add_service sets it before the first call).
    int number() const noexcept { return number_; }

private:
    int number_ = 0;
    friend class engine;
};

/// Memory a service message covers without copying it.
struct segment {
    const void* data = nullptr;
    std::size_t bytes = 0;
};

/// Memory a service reply is received into (see engine::service_receive).
struct receive_segment {
    void* data = nullptr;
    std::size_t bytes = 0;
};

class engine {
public:
    /// The engine of this process, started (and MPI initialised) on first
    /// use; it is shut down with the rampart::runtime. Needs a live runtime.
    static engine& get();

    /// The logical rank and the number of logical ranks (spares not counted).
    int rank() const noexcept { return rank_; }
    int size() const noexcept { return size_; }
    /// 0 for the process that started as this rank; k for the k-th spare
    /// that replaced it after a crash.
    int incarnation() const noexcept { return incarnation_; }
    /// Largest tag a user may give.
    int max_tag() const noexcept { return max_tag_; }

    /// Sends `payload` to logical rank `dest` with `tag`; `done` is fulfilled
    /// when MPI no longer needs the payload.
    void post_send(int dest, int tag, outgoing_payload payload, promise<void> done);

    /// Receives the next message from logical rank `source` with `tag` into
    /// `target`.
    void post_recv(int source, int tag, std::unique_ptr<incoming_target> target);

    /// Test hook: sends `payload` with an explicit sequence number and
    /// envelope fields, bypassing numbering (to make duplicates and malformed
    /// messages). `raw_bytes`, if not empty, is sent instead of an envelope.
    void post_raw(int dest, int tag, std::uint64_t sequence, outgoing_payload payload, std::string raw_bytes,
                  promise<void> done);

    engine_counters counters() const;

    /// Registers a service and returns its number (from any thread); it gets
    /// calls until remove_service(number) returns.
    int add_service(service* s);
    void remove_service(int number);
    /// Every service operation belongs to a recovery epoch, `epoch`: the
    /// count of recoveries() the service had seen when it decided on it
    /// (read once for all the operations of one exchange, such as a receive
    /// and its request). An operation of an older epoch than the engine's
    /// when it reaches MPI is dropped (its done gets false), as are messages
    /// held for a service not created yet when a recovery ends: services
    /// ask again in on_recovery, so that nothing of an exchange cut by a
    /// recovery is left to meet a later one.
    ///
    /// Sends `head` followed by the bytes of `data` to logical rank `dest`
    /// for service `number` (a service on `dest` with the same number gets
    /// it). The memory of `data` must stay valid until `done` is called, on
    /// the engine thread, with false if the send failed or was dropped.
    void service_send(int number, int dest, std::vector<char> head, std::vector<segment> data,
                      std::function<void(bool)> done, std::uint64_t epoch);
    /// Replies that go straight into the asker's memory, with no copy on the
    /// way (the bulk of a store load). The asker takes a number with
    /// new_reply_number(), posts service_receive for it, then sends its
    /// request (with the number in it) by service_send; the answerer sends
    /// the reply by service_reply to that number, as bare bytes (at most
    /// max_reply_bytes). The memory of `into` may be written until `done` is
    /// called, on the engine thread: done(true, n) when a reply of n bytes
    /// came (n larger than `into`: nothing written, counted as malformed),
    /// done(false, 0) if MPI failed it or it was dropped (ask again in
    /// on_recovery). Replies from one source for one service are matched in
    /// the order they were expected.
    ///
    ///     const auto n = e.new_reply_number(), epoch = e.recoveries();
    ///     e.service_receive(number(), holder, n, {{out, bytes}}, [](bool ok, std::size_t got) { ... }, epoch);
    ///     e.service_send(number(), holder, request_with(n), {}, [](bool) {}, epoch);
    ///     // on the holder, in on_message:
    ///     e.service_reply(asker, n, {{data, bytes}}, [](bool) {}, e.recoveries());
    static constexpr std::size_t max_reply_bytes = std::size_t{1} << 30;
    std::uint64_t new_reply_number() noexcept { return next_reply_.fetch_add(1, std::memory_order_relaxed); }
    void service_receive(int number, int source, std::uint64_t reply, std::vector<receive_segment> into,
                         std::function<void(bool, std::size_t)> done, std::uint64_t epoch);
    void service_reply(int dest, std::uint64_t reply, std::vector<segment> data, std::function<void(bool)> done,
                       std::uint64_t epoch);
    /// While some service operation runs (count above 0), the engine polls
    /// without pausing, so that service messages are answered at once.
    void service_busy(int delta);
    /// The states (see service::recovery_state) of service `number`, by
    /// logical rank, from the last recovery: for a service created after it,
    /// as on the process that replaced a dead rank. Empty before any recovery.
    std::vector<std::vector<char>> recovery_states(int number) const;
    /// Logical ranks dead with no spare to replace them, sorted.
    std::vector<int> lost_ranks() const;
    /// Recoveries ended so far: the same count on every process of the job
    /// (spares too) once it has seen the same recoveries.
    std::uint64_t recoveries() const;
    /// The program carries on without the lost ranks: receives from living
    /// ranks work again. Returns the lost ranks acknowledged.
    std::vector<int> acknowledge_losses();

    using channel_state = detail::channel_state;

    /// Checkpoints (from any thread but the engine's; each call waits for
    /// the engine thread to do it). A checkpoint must be taken where the
    /// program waits for no message: every receive it posted has been
    /// delivered, so that the counts and the program's state agree.
    ///
    ///     auto channels = engine::get().snapshot_channels();      // at iteration k
    ///     save(k, my_state, channels.to_bytes());                // the store, in rampart
    ///     ... once every rank has saved k: engine::get().trim_send_log(channels);
    ///     // a replacement (incarnation() > 0) that finds checkpoint k:
    ///     engine::get().restore_channels(channel_state::from_bytes(bytes));   // then resume at k
    ///
    /// The counts of this rank's channels now: messages sent (the next send
    /// sequence) per (dest, tag), messages delivered to the program per
    /// (source, tag). Throws rampart::invalid_argument naming the channel if
    /// a receive is posted and not yet delivered. A message that arrived
    /// before the program asked for it is not counted (it is after the
    /// checkpoint for its receiver; its sender still has it in its log).
    channel_state snapshot_channels();

    /// On a replacement (a spare that took over this logical rank), before
    /// its program sends or receives on the channels of `state`: the program
    /// resumes from the checkpoint where `state` was taken. Sends continue
    /// numbering from the counts of `state.sent` (the survivors see them as
    /// the messages they had from the dead process, and drop those they have
    /// already); the send log starts there. Receives start at the counts of
    /// `state.received`: messages below (the survivors' re-sends of what the
    /// checkpoint already holds) are dropped, the next is delivered. The
    /// survivors are told the restored send counts, so that they wait only
    /// for the duplicates that will come.
    /// Throws rampart::invalid_argument, changing nothing, if `state` is for
    /// another rank, names a rank or tag out of range, or a channel of it
    /// has been used already by this process. Throws comm_error, with the
    /// state restored, if some survivor can no longer send messages the
    /// checkpoint lacks (its log was trimmed past them: a checkpoint older
    /// than the one the survivors trimmed at); receives on those channels
    /// fail with a comm_error too.
    void restore_channels(const channel_state& state);

    /// Drops from the send log the messages to each (dest, tag) of
    /// `upto.sent` whose sequence is below its count; the log then holds only
    /// what was sent after the checkpoint. Call it with this rank's own
    /// snapshot once every rank has committed that checkpoint: every message
    /// sent before it has been received then, and a replacement restarts
    /// from it or a later one. A replacement that restarts from an older
    /// point finds the messages gone: its receives on those channels fail
    /// with a comm_error naming the channel. Throws rampart::invalid_argument,
    /// changing nothing, if `upto` is another rank's, or a count exceeds the
    /// messages sent on its channel. Without spares (no log) it only checks.
    void trim_send_log(const channel_state& upto);

    /// Records the program's iteration; kills this rank if RAMPART_KILL
    /// orders it for this iteration.
    void report_iteration(std::uint64_t iteration);

    /// This rank's program failed (an exception left it while the runtime
    /// lived, std::terminate, exit() with the runtime alive): every other
    /// process of the job stops at once, and no spare replaces this rank.
    /// Returns once they have stopped (about a second at most); the engine
    /// has ended then, and its pending operations have failed with `cause`
    /// (if given). Does nothing on the engine thread or after the end.
    void program_failed(std::exception_ptr cause);
    /// What made this rank's program end the job, if it did and the cause
    /// is known (a resilient task that failed for good), else nullptr.
    std::exception_ptr failure_here() const;
    /// This rank runs its program: the runtime has not begun to shut down.
    bool program_running() const;

    /// The engine if this process has started one, else nullptr.
    static engine* started() noexcept;

    class impl;

private:
    engine() = default;
    void write_report();
    /// Dies by SIGKILL as a kill order asks (or stops itself with SIGSTOP,
    /// a hang, for a `stop` order), leaving a note of the time for the
    /// launcher's report.
    void die(const char* why);
    const kill_order* my_kill_order() const;
    void start_kill_timer();
    int rank_ = 0, size_ = 1, max_tag_ = 0, incarnation_ = 0;
    std::int64_t started_us_ = 0;  // when this process began to run its rank
    environment_config config_;
    std::atomic<std::uint64_t> iteration_{0};
    std::atomic<std::uint64_t> next_reply_{1};
    impl* impl_ = nullptr;  // owned; lives until process shutdown
    friend class impl;
};

}  // namespace rampart::comm::detail
