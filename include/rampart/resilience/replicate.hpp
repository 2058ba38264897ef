#pragma once
// Task replication (HPX names): run n copies at once and take the first valid
// result, or vote over the results.

#include <rampart/resilience/detail/replicate_frame.hpp>
#include <rampart/resilience/vote.hpp>
#include <rampart/task/detail/when_ready.hpp>
#include <rampart/task/future.hpp>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart {

namespace detail {

template <class Vote, class Valid, class F, class... Args>
auto async_replicate_impl(replicate_policy p, Vote&& vote, Valid&& valid, F&& f, Args&&... args) {
    using R = std::invoke_result_t<std::decay_t<F>&, const std::decay_t<Args>&...>;
    check_count(p.replicas, "replica count");
    check_count(p.replays, "replay count");
    count(&counter_slot::tasks);
    auto* out = new shared_state<R>(2);
    auto result = future_access::make(state_ptr<shared_state<R>>(out));
    auto* frame = make_replicate_frame<R>(p, std::forward<F>(f), std::make_tuple(std::forward<Args>(args)...),
                                          std::forward<Valid>(valid), std::forward<Vote>(vote), out);
    frame->launch_round();
    return result;
}

template <class Vote, class Valid, class F, class... Ins>
auto dataflow_replicate_impl(replicate_policy p, Vote&& vote, Valid&& valid, F&& f, Ins&&... ins) {
    using R = std::invoke_result_t<std::decay_t<F>&, const shareable_t<Ins>&...>;
    using Tuple = std::tuple<shareable_t<Ins>...>;
    check_count(p.replicas, "replica count");
    check_count(p.replays, "replay count");
    check_inputs(std::forward_as_tuple(ins...));
    count(&counter_slot::tasks);
    auto* out = new shared_state<R>(2);
    auto result = future_access::make(state_ptr<shared_state<R>>(out));
    // The frame is built when the inputs are ready; until then the pending
    // dataflow counts in the caller's finish scope.
    finish_scope* scope = enter_current_finish();
    when_ready(std::make_tuple(make_shareable(std::forward<Ins>(ins))...),
               [p, out, scope, fn = std::forward<F>(f), v = std::forward<Valid>(valid),
                vt = std::forward<Vote>(vote)](Tuple&& ready) mutable noexcept {
                   task_context saved = scheduler::context();
                   scheduler::context().finish = scope;
                   try {
                       make_replicate_frame<R>(p, std::move(fn), std::move(ready), std::move(v), std::move(vt), out)
                           ->launch_round();
                   } catch (...) {
                       std::terminate();  // allocation failure or no runtime
                   }
                   scheduler::context() = saved;
                   if (scope) scope->leave();
               });
    return result;
}

}  // namespace detail

/// Runs n copies of f(args...) concurrently; the result is that of the first
/// copy (in replica order) that did not throw. When all throw, the future holds
/// replicate_failed with the last failure nested.
///
///     auto f = rampart::async_replicate(3, compute, x);
template <class F, class... Args>
auto async_replicate(std::size_t n, F&& f, Args&&... args) {
    return detail::async_replicate_impl({n, 1}, detail::first_valid{}, detail::accept_all{}, std::forward<F>(f),
                                        std::forward<Args>(args)...);
}

/// The first copy whose result passes valid(result) wins.
template <class Valid, class F, class... Args>
auto async_replicate_validate(std::size_t n, Valid&& valid, F&& f, Args&&... args) {
    return detail::async_replicate_impl({n, 1}, detail::first_valid{}, std::forward<Valid>(valid), std::forward<F>(f),
                                        std::forward<Args>(args)...);
}

/// vote(std::vector<T>&& results) picks the result from the copies that did not
/// throw; it returns T, or std::optional<T> where nullopt means "no result"
/// (vote_failed). rampart::majority_vote{} is the usual vote.
///
///     auto f = rampart::async_replicate_vote(3, rampart::majority_vote{}, compute, x);
template <class Vote, class F, class... Args>
auto async_replicate_vote(std::size_t n, Vote&& vote, F&& f, Args&&... args) {
    return detail::async_replicate_impl({n, 1}, std::forward<Vote>(vote), detail::accept_all{}, std::forward<F>(f),
                                        std::forward<Args>(args)...);
}

/// The vote sees only the results that pass valid(result).
template <class Vote, class Valid, class F, class... Args>
auto async_replicate_vote_validate(std::size_t n, Vote&& vote, Valid&& valid, F&& f, Args&&... args) {
    return detail::async_replicate_impl({n, 1}, std::forward<Vote>(vote), std::forward<Valid>(valid),
                                        std::forward<F>(f), std::forward<Args>(args)...);
}

/// Beyond HPX: n copies, each of which replays up to `replays` attempts on its
/// own failures; when the vote finds no majority, all copies run again (up to
/// `replays` rounds).
///
///     auto f = rampart::async_replicate_replay(3, 5, rampart::majority_vote{}, compute, x);
template <class Vote, class F, class... Args>
auto async_replicate_replay(std::size_t n, std::size_t replays, Vote&& vote, F&& f, Args&&... args) {
    return detail::async_replicate_impl({n, replays}, std::forward<Vote>(vote), detail::accept_all{},
                                        std::forward<F>(f), std::forward<Args>(args)...);
}

/// async_replicate started when the future inputs are ready (see dataflow);
/// the copies get futures as shared_futures.
template <class F, class... Ins>
auto dataflow_replicate(std::size_t n, F&& f, Ins&&... ins) {
    return detail::dataflow_replicate_impl({n, 1}, detail::first_valid{}, detail::accept_all{}, std::forward<F>(f),
                                           std::forward<Ins>(ins)...);
}

template <class Valid, class F, class... Ins>
auto dataflow_replicate_validate(std::size_t n, Valid&& valid, F&& f, Ins&&... ins) {
    return detail::dataflow_replicate_impl({n, 1}, detail::first_valid{}, std::forward<Valid>(valid),
                                           std::forward<F>(f), std::forward<Ins>(ins)...);
}

template <class Vote, class F, class... Ins>
auto dataflow_replicate_vote(std::size_t n, Vote&& vote, F&& f, Ins&&... ins) {
    return detail::dataflow_replicate_impl({n, 1}, std::forward<Vote>(vote), detail::accept_all{}, std::forward<F>(f),
                                           std::forward<Ins>(ins)...);
}

template <class Vote, class Valid, class F, class... Ins>
auto dataflow_replicate_vote_validate(std::size_t n, Vote&& vote, Valid&& valid, F&& f, Ins&&... ins) {
    return detail::dataflow_replicate_impl({n, 1}, std::forward<Vote>(vote), std::forward<Valid>(valid),
                                           std::forward<F>(f), std::forward<Ins>(ins)...);
}

/// dataflow form of async_replicate_replay.
template <class Vote, class F, class... Ins>
auto dataflow_replicate_replay(std::size_t n, std::size_t replays, Vote&& vote, F&& f, Ins&&... ins) {
    return detail::dataflow_replicate_impl({n, replays}, std::forward<Vote>(vote), detail::accept_all{},
                                           std::forward<F>(f), std::forward<Ins>(ins)...);
}

}  // namespace rampart
