#pragma once

#include <rampart/task/detail/scheduler.hpp>

#include <cstdint>

namespace rampart::this_task {

/// Which attempt of a resilient task is running: 0 for the first run, 1 for
/// the first replay, ... Outside a resilient task: 0.
inline std::uint32_t attempt() noexcept { return detail::scheduler::context().attempt; }

/// Which replica of a replicated task is running (0 .. n-1); 0 otherwise.
inline std::uint32_t replica() noexcept { return detail::scheduler::context().replica; }

}  // namespace rampart::this_task
