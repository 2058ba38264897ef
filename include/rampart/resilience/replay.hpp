#pragma once
// Task replay (HPX names): run a task again when it throws or its result is
// rejected, up to n attempts in all.

#include <rampart/resilience/detail/attempt.hpp>
#include <rampart/task/dataflow.hpp>
#include <rampart/task/future.hpp>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart {

namespace detail {

template <class F, class... Args>
using replay_result_t = std::invoke_result_t<const std::decay_t<F>&, const std::decay_t<Args>&...>;

template <class Valid, class F, class... Args>
auto async_replay_impl(std::size_t n, Valid&& valid, F&& f, Args&&... args) {
    using R = std::invoke_result_t<std::decay_t<F>&, const std::decay_t<Args>&...>;
    check_count(n, "replay count");
    count(&counter_slot::tasks);
    return launch<R>(
        enter_current_finish(),
        [n, v = std::forward<Valid>(valid), fn = std::forward<F>(f),
         tup = std::make_tuple(std::forward<Args>(args)...)]() mutable -> R { return replay_body<R>(n, fn, tup, v); });
}

template <class Valid, class F, class... Ins>
auto dataflow_replay_impl(std::size_t n, Valid&& valid, F&& f, Ins&&... ins) {
    using R = std::invoke_result_t<std::decay_t<F>&, const shareable_t<Ins>&...>;
    check_count(n, "replay count");
    count(&counter_slot::tasks);
    return dataflow_launch<R>(
        [n, v = std::forward<Valid>(valid), fn = std::forward<F>(f)](
            std::tuple<shareable_t<Ins>...>&& in) mutable -> R { return replay_body<R>(n, fn, in, v); },
        std::make_tuple(make_shareable(std::forward<Ins>(ins))...));
}

}  // namespace detail

/// Runs f(args...); when it throws, runs it again, up to n attempts in all.
/// After n failures the future holds replay_exhausted with the last failure
/// nested. f receives its arguments as const lvalues, so each attempt sees the
/// same inputs.
///
///     auto f = rampart::async_replay(3, [](int x) { return may_fail(x); }, 7);
///     int v = f.get();   // or replay_exhausted
template <class F, class... Args>
auto async_replay(std::size_t n, F&& f, Args&&... args) {
    return detail::async_replay_impl(n, detail::accept_all{}, std::forward<F>(f), std::forward<Args>(args)...);
}

/// As async_replay, and a result for which valid(result) is false (or throws)
/// counts as a failure.
///
///     auto f = rampart::async_replay_validate(3, [](double r) { return std::isfinite(r); }, solve, a);
template <class Valid, class F, class... Args>
auto async_replay_validate(std::size_t n, Valid&& valid, F&& f, Args&&... args) {
    return detail::async_replay_impl(n, std::forward<Valid>(valid), std::forward<F>(f), std::forward<Args>(args)...);
}

/// async_replay started when every future among the inputs is ready. f gets
/// the ready inputs as with dataflow, with each future turned into a
/// shared_future so that every attempt can read it.
///
///     auto c = rampart::dataflow_replay(3, [](auto a, auto b) { return a.get() + b.get(); }, fa, fb);
template <class F, class... Ins>
auto dataflow_replay(std::size_t n, F&& f, Ins&&... ins) {
    return detail::dataflow_replay_impl(n, detail::accept_all{}, std::forward<F>(f), std::forward<Ins>(ins)...);
}

/// dataflow_replay with a validator.
template <class Valid, class F, class... Ins>
auto dataflow_replay_validate(std::size_t n, Valid&& valid, F&& f, Ins&&... ins) {
    return detail::dataflow_replay_impl(n, std::forward<Valid>(valid), std::forward<F>(f), std::forward<Ins>(ins)...);
}

}  // namespace rampart
