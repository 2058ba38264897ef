#pragma once
// Checks shared by the byte form of channel_state and the engine, which takes
// one from the program at restore_channels and trim_send_log.

#include <rampart/recovery/recovery.hpp>

#include <string>
#include <vector>

namespace rampart::recovery::detail {

/// "" when `counts` (the list named `list` of a channel_state) is sorted by
/// (peer, tag) without repeats and no rank or tag is negative; else what is
/// wrong.
std::string check_counts(const std::vector<channel_state::count>& counts, const char* list);

}  // namespace rampart::recovery::detail
