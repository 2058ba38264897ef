#pragma once
// Crash recovery, as the program sees it. A crashed rank is replaced by a
// spare process with no call from the program (rampart-run --spares S); what
// the program may want is here: whether ranks were lost for good (no spare
// left) so that it can carry on without them, which incarnation of its rank
// it is, the iteration it reports for fault injection and the run's report,
// and the counts of its message channels that a checkpoint keeps so that a
// replacement resumes from it.
//
//     for (int it = 0; it < n; ++it) {
//         rampart::recovery::report_iteration(it);          // --kill R@iterN, the report
//         step();
//         if (!rampart::recovery::wait_for_losses(std::chrono::milliseconds(0)).empty())
//             take_over(rampart::recovery::acknowledge_losses());   // shrinking recovery
//     }

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rampart::recovery {

/// 0 for the process that started as this rank; k for the k-th spare that
/// replaced it after a crash. Starts the communication engine if needed.
int incarnation();

/// Records the program's iteration, for the run's report and for kills
/// ordered at an iteration (rampart-run --kill R@iterN), which happen here.
///
///     for (int it = 0; it < n; ++it) { rampart::recovery::report_iteration(it); step(); }
void report_iteration(std::uint64_t iteration);

/// Recoveries ended so far (a crash replaced by a spare, or a rank lost for
/// good): the same count on every process once it has seen the same
/// recoveries.
std::uint64_t recoveries();

/// Logical ranks that died with no spare left to replace them, sorted. A
/// rank appears here once the survivors' recovery has ended.
std::vector<int> lost_ranks();

/// Waits until some rank is lost that the program has not acknowledged yet
/// (see acknowledge_losses), or until `timeout` has passed. Returns
/// lost_ranks() then: what was lost so far, empty if nothing was.
///
///     auto lost = rampart::recovery::wait_for_losses(std::chrono::seconds(10));
std::vector<int> wait_for_losses(std::chrono::milliseconds timeout);

/// Shrinking recovery, the way of MPIX_Comm_failure_ack: when a rank is lost
/// for good, every receive waiting at that moment fails with a comm_error,
/// and so does every new receive until the program calls this function to
/// say that it carries on without the lost ranks (for example by loading
/// their data from a rampart::store). From then on receives from living
/// ranks work; receives from and sends to lost ranks fail. Returns the lost
/// ranks it acknowledges.
///
///     try { step(); } catch (const rampart::comm::comm_error&) {
///         auto lost = rampart::recovery::acknowledge_losses();   // take over their work
///     }
std::vector<int> acknowledge_losses();

/// How far the numbered channels of one rank have gone: per (dest, tag) the
/// messages it has sent, per (source, tag) the messages its program has
/// received. Taken at a checkpoint, given back to a replacement, and used to
/// trim the send log. rampart::store::checkpoints does all three; use these
/// calls directly only for checkpoints kept elsewhere.
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

/// A checkpoint must be taken where the program waits for no message: every
/// receive it posted has been delivered, so that the counts and the
/// program's state agree.
///
///     auto channels = rampart::recovery::snapshot_channels();     // at iteration k
///     save(k, my_state, channels.to_bytes());
///     // once every rank has saved k:
///     rampart::recovery::trim_send_log(channels);
///     // a replacement (incarnation() > 0) that finds checkpoint k:
///     rampart::recovery::restore_channels(channel_state::from_bytes(bytes));   // then resume at k
///
/// The counts of this rank's channels now: messages sent (the next send
/// sequence) per (dest, tag), messages delivered to the program per
/// (source, tag). Throws rampart::invalid_argument naming the channel if a
/// receive is posted and not yet delivered. A message that arrived before
/// the program asked for it is not counted (it is after the checkpoint for
/// its receiver; its sender still has it in its log).
channel_state snapshot_channels();

/// On a replacement (a spare that took over this logical rank), before its
/// program sends or receives on the channels of `state`: the program resumes
/// from the checkpoint where `state` was taken. Sends continue numbering
/// from the counts of `state.sent` (the survivors drop those they have
/// already); receives start at the counts of `state.received` (the
/// survivors' re-sends of what the checkpoint holds are dropped). Throws
/// rampart::invalid_argument, changing nothing, if `state` is for another
/// rank, names a rank or tag out of range, or a channel of it has been used
/// already by this process. Throws comm_error, with the state restored, if
/// some survivor can no longer send messages the checkpoint lacks (its log
/// was trimmed past them); receives on those channels fail with a
/// comm_error too.
void restore_channels(const channel_state& state);

/// Drops from the send log the messages to each (dest, tag) of `upto.sent`
/// whose sequence is below its count. Call it with this rank's own snapshot
/// once every rank has committed that checkpoint. A replacement that
/// restarts from an older point finds the messages gone: its receives on
/// those channels fail with a comm_error naming the channel. Throws
/// rampart::invalid_argument, changing nothing, if `upto` is another rank's,
/// or a count exceeds the messages sent on its channel. Without spares (no
/// log) it only checks.
void trim_send_log(const channel_state& upto);

}  // namespace rampart::recovery
