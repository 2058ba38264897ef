#pragma once

#include <rampart/task/counters.hpp>
#include <rampart/task/executor.hpp>
#include <rampart/task/future.hpp>

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart {

/// Runs f(args...) as a task and returns the future of its result; an
/// exception thrown by f is stored in the future.
///
///     rampart::runtime rt;
///     auto f = rampart::async([](int a, int b) { return a + b; }, 20, 22);
///     assert(f.get() == 42);
///
/// Arguments are copied (or moved) into the task.
template <class F, class... Args>
requires(!executor<F>) auto async(F&& f, Args&&... args)
    -> future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
    using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
    detail::count(&detail::counter_slot::tasks);
    return detail::launch<R>(
        detail::enter_current_finish(),
        [fn = std::forward<F>(f), tup = std::make_tuple(std::forward<Args>(args)...)]() mutable -> R {
            return std::apply(std::move(fn), std::move(tup));
        });
}

/// Runs f(args...) through an executor, e.g. a replay_executor.
///
///     auto exec = rampart::make_replay_executor(3);
///     auto f = rampart::async(exec, compute, x);
template <executor E, class F, class... Args>
auto async(E&& exec, F&& f, Args&&... args) {
    return exec.async_execute(std::forward<F>(f), std::forward<Args>(args)...);
}

}  // namespace rampart
