#pragma once

#include <rampart/task/counters.hpp>
#include <rampart/task/detail/when_ready.hpp>
#include <rampart/task/executor.hpp>
#include <rampart/task/future.hpp>

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart {

namespace detail {

/// Spawns make_body(ready_inputs) as a task once the inputs are ready; the
/// body's result goes into the returned future.
template <class R, class Body, class... Ins>
future<R> dataflow_launch(Body&& body, std::tuple<Ins...>&& ins) {
    check_inputs(ins);
    finish_scope* scope = enter_current_finish();
    auto* st = new shared_state<R>(2);
    auto out = future_access::make(state_ptr<shared_state<R>>(st));
    when_ready(std::move(ins), [st, scope, b = std::forward<Body>(body)](std::tuple<Ins...>&& ready) mutable noexcept {
        try {
            scheduler::get().spawn(scope, [st, b = std::move(b), in = std::move(ready)]() mutable noexcept {
                st->set_from([&]() -> R { return b(std::move(in)); });
                st->release();
            });
        } catch (...) {
            std::terminate();  // only without a runtime, which outlives every task
        }
    });
    return out;
}

}  // namespace detail

/// Runs f(inputs...) as a task once every future among the inputs is ready.
/// f receives the ready futures themselves (and plain values as they are), so
/// it sees an input's exception only if it calls get().
///
///     auto a = rampart::async([] { return 1; });
///     auto b = rampart::async([] { return 2; });
///     auto c = rampart::dataflow([](auto a, auto b) { return a.get() + b.get(); },
///                                std::move(a), std::move(b));
///
/// Inputs may be future, shared_future, std::vector of either, or any value.
template <class F, class... Ins>
requires(!executor<F>) auto dataflow(F&& f, Ins&&... ins)
    -> future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Ins>...>> {
    using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Ins>...>;
    detail::count(&detail::counter_slot::tasks);
    return detail::dataflow_launch<R>(
        [fn = std::forward<F>(f)](std::tuple<std::decay_t<Ins>...>&& in) mutable -> R {
            return std::apply(std::move(fn), std::move(in));
        },
        std::make_tuple(std::forward<Ins>(ins)...));
}

/// dataflow through an executor, e.g. a replicate_executor.
template <executor E, class F, class... Ins>
auto dataflow(E&& exec, F&& f, Ins&&... ins) {
    return exec.dataflow_execute(std::forward<F>(f), std::forward<Ins>(ins)...);
}

}  // namespace rampart
