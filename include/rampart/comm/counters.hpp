#pragma once
// What the communication engine of this process counted.

#include <cstdint>

namespace rampart::comm {

/// Messages, bytes, re-sends and the engine's CPU time, for reports and
/// tests. Counts of this process only (a replacement starts from zero).
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

/// The counters of this process's engine now (starts it if needed).
///
///     const double before = rampart::comm::counters().cpu_seconds;
///     exchange_halos();
///     const double spent = rampart::comm::counters().cpu_seconds - before;
engine_counters counters();

}  // namespace rampart::comm
