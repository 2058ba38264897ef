// The public calls of crash recovery. The communication engine carries out
// recovery (it owns MPI); these ask it.

#include <rampart/comm/detail/engine.hpp>
#include <rampart/recovery/recovery.hpp>

namespace rampart::recovery {

namespace {
comm::detail::engine& eng() { return comm::detail::engine::get(); }
}  // namespace

int incarnation() { return eng().incarnation(); }
void report_iteration(std::uint64_t iteration) { eng().report_iteration(iteration); }
std::uint64_t recoveries() { return eng().recoveries(); }
std::vector<int> lost_ranks() { return eng().lost_ranks(); }
std::vector<int> wait_for_losses(std::chrono::milliseconds timeout) { return eng().wait_for_losses(timeout); }
std::vector<int> acknowledge_losses() { return eng().acknowledge_losses(); }
channel_state snapshot_channels() { return eng().snapshot_channels(); }
void restore_channels(const channel_state& state) { eng().restore_channels(state); }
void trim_send_log(const channel_state& upto) { eng().trim_send_log(upto); }

}  // namespace rampart::recovery
