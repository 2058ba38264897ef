#pragma once
// What the running task knows about itself, and how code called from a
// resilient task keeps its effects and inputs consistent across the task's
// attempts and copies (rampart::comm's isend and irecv are built on these).

#include <rampart/resilience/detail/effects.hpp>
#include <rampart/task/detail/scheduler.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace rampart::this_task {

/// Which attempt of a resilient task is running: 0 for the first run, 1 for
/// the first replay, ... Outside a resilient task: 0.
inline std::uint32_t attempt() noexcept { return detail::scheduler::context().attempt; }

/// Which replica of a replicated task is running (0 .. n-1); 0 otherwise.
inline std::uint32_t replica() noexcept { return detail::scheduler::context().replica; }

/// True while an attempt or copy of a resilient task runs on this thread.
inline bool resilient() noexcept { return detail::attempt_effects::current() != nullptr; }

/// Holds an effect of the running resilient task back until its verdict:
/// `commit` runs if this attempt's result is accepted (the copy chosen or
/// voted for, a result its validator passed), `discard` otherwise. Returns
/// false outside a resilient task, where nothing is held: do it now.
///
///     auto send = [msg] { post(msg); };
///     if (!rampart::this_task::hold_until_accepted(send, [] {})) send();
inline bool hold_until_accepted(std::function<void()> commit, std::function<void()> discard) {
    auto* attempt = detail::attempt_effects::current();
    if (!attempt) return false;
    attempt->defer(std::move(commit), std::move(discard));
    return true;
}

/// An input from outside that every attempt and copy of the running
/// resilient task must see alike: the k-th call with `channel` in any of
/// them gives the same object, made by make() (a T* to own) at the first
/// such call. nullptr outside a resilient task.
///
///     auto m = rampart::this_task::same_input<shared_future<int>>(
///         "from 3", [] { return new shared_future<int>(receive_from(3)); });
template <class T, class Make>
std::shared_ptr<T> same_input(const std::string& channel, Make&& make) {
    auto* attempt = detail::attempt_effects::current();
    if (!attempt) return nullptr;
    const std::string key = channel + ":" + std::to_string(attempt->next_index(channel));
    return attempt->task().cached<T>(key, std::forward<Make>(make));
}

}  // namespace rampart::this_task
