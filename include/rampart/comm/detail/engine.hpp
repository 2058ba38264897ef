#pragma once
// The communication engine: one thread per process that makes every MPI call
// (MPI_THREAD_FUNNELED). Other threads hand it operations through a queue and
// get results through promises. This header keeps MPI itself out of sight.

#include <rampart/comm/counters.hpp>
#include <rampart/comm/serialization.hpp>
#include <rampart/comm/service.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/task/config.hpp>
#include <rampart/task/future.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace rampart::comm::detail {

using channel_state = rampart::recovery::channel_state;

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

    /// The engine side of rampart::comm::service (see there).
    int add_service(service* s);
    void remove_service(int number);
    void service_send(int number, int dest, std::vector<char> head, std::vector<segment> data,
                      std::function<void(bool)> done, std::uint64_t epoch);
    static constexpr std::size_t max_reply_bytes = service::max_reply_bytes;
    std::uint64_t new_reply_number() noexcept { return next_reply_.fetch_add(1, std::memory_order_relaxed); }
    void service_receive(int number, int source, std::uint64_t reply, std::vector<receive_segment> into,
                         std::function<void(bool, std::size_t)> done, std::uint64_t epoch);
    void service_reply(int dest, std::uint64_t reply, std::vector<segment> data, std::function<void(bool)> done,
                       std::uint64_t epoch);
    /// While some service operation runs (count above 0), the engine polls
    /// without pausing, so that service messages are answered at once.
    void service_busy(int delta);
    /// How often logical rank `logical` has been replaced (0: its first
    /// process), as of the last recovery's exchange of service states.
    int incarnation_of(int logical) const;
    /// Logical ranks dead with no spare to replace them, sorted.
    std::vector<int> lost_ranks() const;
    /// See rampart::comm::nodes_at_start.
    const std::vector<int>& nodes_at_start() const noexcept { return nodes_at_start_; }
    /// Recoveries ended so far: the same count on every process of the job
    /// (spares too) once it has seen the same recoveries.
    std::uint64_t recoveries() const;
    /// The program carries on without the lost ranks: receives from living
    /// ranks work again. Returns the lost ranks acknowledged.
    std::vector<int> acknowledge_losses();
    /// See rampart::recovery::wait_for_losses.
    std::vector<int> wait_for_losses(std::chrono::milliseconds timeout);

    /// Checkpoints of the channels (see rampart::recovery::snapshot_channels
    /// and the calls after it), from any thread but the engine's; each call
    /// waits for the engine thread to do it.
    channel_state snapshot_channels();

    void restore_channels(const channel_state& state);

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
    std::vector<int> nodes_at_start_;  // set before the engine is handed out, then read only
    std::atomic<std::uint64_t> iteration_{0};
    std::atomic<std::uint64_t> next_reply_{1};
    impl* impl_ = nullptr;  // owned; lives until process shutdown
    friend class impl;
};

}  // namespace rampart::comm::detail
