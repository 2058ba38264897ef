#pragma once

#include <rampart/task/detail/when_ready.hpp>
#include <rampart/task/future.hpp>

#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace rampart {

/// A future that becomes ready when all the given futures are; it holds them,
/// ready, in a tuple. Exceptions stay inside the individual futures.
///
///     auto all = rampart::when_all(std::move(f1), std::move(f2));
///     auto [a, b] = all.get();   // a, b are ready futures
template <class... Futs>
requires(detail::is_future_v<Futs>&&...) future<std::tuple<std::decay_t<Futs>...>> when_all(Futs&&... futs) {
    using R = std::tuple<std::decay_t<Futs>...>;
    detail::check_inputs(std::forward_as_tuple(futs...));
    auto* st = new detail::shared_state<R>(2);
    auto out = detail::future_access::make(detail::state_ptr<detail::shared_state<R>>(st));
    detail::when_ready(std::make_tuple(std::forward<Futs>(futs)...), [st](R&& ready) noexcept {
        st->set_from([&]() -> R { return std::move(ready); });
        st->release();
    });
    return out;
}

/// The same for a vector of futures.
///
///     std::vector<rampart::future<int>> v = ...;
///     rampart::when_all(std::move(v)).get();   // every element is ready
template <class Fut>
requires detail::is_future_v<Fut> future<std::vector<Fut>> when_all(std::vector<Fut> futs) {
    using R = std::vector<Fut>;
    detail::check_inputs(std::forward_as_tuple(futs));
    auto* st = new detail::shared_state<R>(2);
    auto out = detail::future_access::make(detail::state_ptr<detail::shared_state<R>>(st));
    detail::when_ready(std::make_tuple(std::move(futs)), [st](std::tuple<R>&& ready) noexcept {
        st->set_from([&]() -> R { return std::move(std::get<0>(ready)); });
        st->release();
    });
    return out;
}

/// Waits for every future in the vector (cooperatively inside a task).
template <class Fut>
requires detail::is_future_v<Fut>
void wait_all(const std::vector<Fut>& futs) {
    for (const auto& f : futs) f.wait();
}

}  // namespace rampart
