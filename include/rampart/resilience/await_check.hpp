#pragma once
// The HClib resilient task (Paul et al., Table I): a data-driven task whose
// output is checked before anyone sees it; a failed check is first repaired
// by an ABFT correction, else the task is replayed. Without a check the task
// is replicated and the copies must agree.

#include <rampart/resilience/detail/attempt.hpp>
#include <rampart/resilience/vote.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/dataflow.hpp>
#include <rampart/task/future.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart {

/// Attempts before async_await_check gives up, as HClib (two failed attempts).
inline constexpr std::size_t default_check_attempts = 3;

namespace detail {

struct no_correction {};

template <class T, class Body, class Check, class Correct, class... Deps>
future<void> await_check_impl(std::size_t attempts, Body&& body, promise<T> out, Check&& check, Correct&& correct,
                              Deps&&... deps) {
    check_count(attempts, "attempt count");
    count(&counter_slot::tasks);
    using Tuple = std::tuple<shareable_t<Deps>...>;
    return dataflow_launch<void>(
        [attempts, out = std::move(out), b = std::forward<Body>(body), chk = std::forward<Check>(check),
         fix = std::forward<Correct>(correct)](Tuple&& in) mutable {
            std::exception_ptr last;
            resilient_task_scope task;
            for (std::size_t a = 0; a < attempts; ++a) {
                if (a > 0) count(&counter_slot::replays);
                attempt_marker mark(a, 0);
                attempt_effects effects(&task);
                std::optional<T> r;
                try {
                    effects_marker collect(&effects);
                    r.emplace(std::apply(b, std::as_const(in)));
                    inject_soft_error();
                } catch (...) {
                    count(&counter_slot::task_exceptions);
                    last = std::current_exception();
                    continue;
                }
                if (passes(chk, *r, last)) {
                    effects.commit();
                    return out.set_value(std::move(*r));
                }
                if constexpr (!std::is_same_v<std::decay_t<Correct>, no_correction>) {
                    bool fixed = false;
                    try {
                        fixed = static_cast<bool>(fix(*r));
                    } catch (...) {
                        last = nest<validator_error>(std::current_exception());
                    }
                    std::exception_ptr after;
                    if (fixed && passes(chk, *r, after)) {
                        count(&counter_slot::corrections_applied);
                        effects.commit();
                        return out.set_value(std::move(*r));
                    }
                }
            }
            out.set_exception(failed_for_good(nest<replay_exhausted>(last, attempts)));
        },
        std::make_tuple(make_shareable(std::forward<Deps>(deps))...));
}

template <class T, class Body, class... Deps>
future<void> await_replicate_impl(std::size_t rounds, Body&& body, promise<T> out, Deps&&... deps) {
    check_count(rounds, "attempt count");
    count(&counter_slot::tasks);
    using Tuple = std::tuple<shareable_t<Deps>...>;
    return dataflow_launch<void>(
        [rounds, out = std::move(out), b = std::forward<Body>(body)](Tuple&& in) mutable {
            // Two copies that agree are accepted; on disagreement a third
            // decides by majority, as in HClib's replication. Only the copy
            // that gave the accepted result sends its messages.
            std::exception_ptr last;
            resilient_task_scope task;
            for (std::size_t round = 0; round < rounds; ++round) {
                std::vector<T> results;
                std::vector<attempt_effects> effects;
                for (std::size_t copy = 0; copy < 3; ++copy) {
                    if (copy == 2 && results.size() == 2 && results[0] == results[1]) break;
                    count(&counter_slot::replicas_launched);
                    attempt_marker mark(round, copy);
                    attempt_effects e(&task);
                    try {
                        effects_marker collect(&e);
                        T copy_result = std::apply(b, std::as_const(in));
                        inject_soft_error();
                        results.push_back(std::move(copy_result));
                        effects.push_back(std::move(e));
                    } catch (...) {
                        count(&counter_slot::task_exceptions);
                        last = std::current_exception();
                    }
                }
                if (results.empty()) continue;
                std::size_t n = results.size();
                auto winner = majority_vote{}(std::vector<T>(results));
                if (winner && n >= 2) {
                    std::uint64_t lost = 0;
                    bool committed = false;
                    for (std::size_t i = 0; i < n; ++i) {
                        if (!(results[i] == *winner)) {
                            ++lost;
                        } else if (!committed) {
                            effects[i].commit();
                            committed = true;
                        }
                    }
                    if (lost) count(&counter_slot::votes_lost, lost);
                    return out.set_value(std::move(*winner));
                }
                if (round + 1 < rounds) count(&counter_slot::replays);
                last = std::make_exception_ptr(vote_failed(n));
            }
            out.set_exception(failed_for_good(nest<replay_exhausted>(last, rounds)));
        },
        std::make_tuple(make_shareable(std::forward<Deps>(deps))...));
}

}  // namespace detail

/// When the future deps are ready, runs body(deps...) (futures passed as
/// shared_futures); if check(result) holds, the result goes to `out`.
/// Otherwise correct(result) may repair it in place (ABFT) and return true, and
/// the repaired result is checked again; failing that, body runs again, up to
/// `attempts` in all, and then `out` receives replay_exhausted.
///
///     rampart::promise<block> p;
///     auto result = p.get_future();
///     rampart::async_await_check(multiply, std::move(p), checksums_match, fix_from_checksums, a, b);
///
/// The returned future<void> is ready when the task (and `out`) is done.
template <class T, class Body, class Check, class Correct, class... Deps>
requires(std::predicate<Check&, const T&>&& std::predicate<Correct&, T&> &&
         (detail::is_future_v<Deps> && ...)) future<void> async_await_check(std::size_t attempts, Body&& body,
                                                                            promise<T> out, Check&& check,
                                                                            Correct&& correct, Deps&&... deps) {
    return detail::await_check_impl(attempts, std::forward<Body>(body), std::move(out), std::forward<Check>(check),
                                    std::forward<Correct>(correct), std::forward<Deps>(deps)...);
}

template <class T, class Body, class Check, class Correct, class... Deps>
requires(std::predicate<Check&, const T&>&& std::predicate<Correct&, T&> &&
         (detail::is_future_v<Deps> && ...)) future<void> async_await_check(Body&& body, promise<T> out, Check&& check,
                                                                            Correct&& correct, Deps&&... deps) {
    return detail::await_check_impl(default_check_attempts, std::forward<Body>(body), std::move(out),
                                    std::forward<Check>(check), std::forward<Correct>(correct),
                                    std::forward<Deps>(deps)...);
}

/// Replay form: no correction; a failed check or an exception replays.
template <class T, class Body, class Check, class... Deps>
requires(std::predicate<Check&, const T&> &&
         (detail::is_future_v<Deps> && ...)) future<void> async_await_check(Body&& body, promise<T> out, Check&& check,
                                                                            Deps&&... deps) {
    return detail::await_check_impl(default_check_attempts, std::forward<Body>(body), std::move(out),
                                    std::forward<Check>(check), detail::no_correction{}, std::forward<Deps>(deps)...);
}

/// Replication form: no check; copies of body must agree (see above).
template <class T, class Body, class... Deps>
requires((detail::is_future_v<Deps> && ...) &&
         std::equality_comparable<T>) future<void> async_await_check(Body&& body, promise<T> out, Deps&&... deps) {
    return detail::await_replicate_impl(default_check_attempts, std::forward<Body>(body), std::move(out),
                                        std::forward<Deps>(deps)...);
}

}  // namespace rampart
