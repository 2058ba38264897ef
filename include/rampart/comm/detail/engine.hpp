#pragma once
// The communication engine: one thread per process that makes every MPI call
// (MPI_THREAD_FUNNELED). Other threads hand it operations through a queue and
// get results through promises. This header keeps MPI itself out of sight.

#include <rampart/comm/serialization.hpp>
#include <rampart/task/config.hpp>
#include <rampart/task/future.hpp>

#include <atomic>
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
    double cpu_seconds = 0;  ///< CPU time of the engine thread: the cost of communication
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
    /// more. Messages in flight during the recovery may be lost: send again
    /// what still lacks an answer.
    virtual void on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost) = 0;
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
    /// Sends `head` followed by the bytes of `data` to logical rank `dest`
    /// for service `number` (a service on `dest` with the same number gets
    /// it). The memory of `data` must stay valid until `done` is called, on
    /// the engine thread, with false if the send failed.
    void service_send(int number, int dest, std::vector<char> head, std::vector<segment> data,
                      std::function<void(bool)> done);
    /// While some service operation runs (count above 0), the engine polls
    /// without pausing, so that service messages are answered at once.
    void service_busy(int delta);
    /// Logical ranks dead with no spare to replace them, sorted.
    std::vector<int> lost_ranks() const;

    /// Records the program's iteration; kills this rank if RAMPART_KILL
    /// orders it for this iteration.
    void report_iteration(std::uint64_t iteration);

    class impl;

private:
    engine() = default;
    void write_report();
    /// Dies by SIGKILL as a kill order asks, leaving a note of the time for
    /// the launcher's report.
    [[noreturn]] void die(const char* why);
    const kill_order* my_kill_order() const;
    void start_kill_timer();
    int rank_ = 0, size_ = 1, max_tag_ = 0, incarnation_ = 0;
    std::int64_t started_us_ = 0;  // when this process began to run its rank
    environment_config config_;
    std::atomic<std::uint64_t> iteration_{0};
    impl* impl_ = nullptr;  // owned; lives until process shutdown
    friend class impl;
};

}  // namespace rampart::comm::detail
