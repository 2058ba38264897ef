#pragma once
// One attempt of a resilient task and the replay loop around it.

#include <rampart/resilience/detail/effects.hpp>
#include <rampart/resilience/errors.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/detail/scheduler.hpp>
#include <rampart/task/detail/shared_state.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rampart::detail {

/// The validator that accepts everything.
struct accept_all {
    template <class T>
    constexpr bool operator()(const T&) const noexcept {
        return true;
    }
};

/// Throws injected_fault at the rate RAMPART_ERROR_RATE asks for (seeded by
/// RAMPART_SEED), counted in faults_injected; called after each attempt's
/// body, so that the attempt's work is lost as with a real soft error.
void inject_soft_error();

template <class V>
inline constexpr bool validates_v = !std::is_same_v<std::decay_t<V>, accept_all>;

/// Marks the running attempt and replica in the task context.
class attempt_marker {
public:
    attempt_marker(std::size_t attempt, std::size_t replica) noexcept : saved_(scheduler::context()) {
        scheduler::context().attempt = static_cast<std::uint32_t>(attempt);
        scheduler::context().replica = static_cast<std::uint32_t>(replica);
    }
    ~attempt_marker() {
        scheduler::context().attempt = saved_.attempt;
        scheduler::context().replica = saved_.replica;
    }

private:
    task_context saved_;
};

/// Calls valid(r): false when it rejects r or throws (the cause goes to `last`).
template <class Valid, class R>
bool passes(Valid& valid, const R& r, std::exception_ptr& last) noexcept {
    if constexpr (!validates_v<Valid>) {
        return true;
    } else {
        bool ok = false;
        try {
            ok = static_cast<bool>(valid(r));
            if (!ok) last = std::make_exception_ptr(validation_failed());
        } catch (...) {
            last = nest<validator_error>(std::current_exception());
        }
        if (!ok) count(&counter_slot::validations_failed);
        return ok;
    }
}

/// Runs f once with the stored arguments as const lvalues (so that it can run
/// again) and validates the result. On success `out` holds the result.
template <class R, class F, class Tuple, class Valid>
bool attempt_once(F& f, const Tuple& args, Valid& valid, std::optional<stored_t<R>>& out,
                  std::exception_ptr& last) noexcept {
    try {
        if constexpr (std::is_void_v<R>) {
            std::apply(f, args);
            out.emplace();
        } else {
            out.emplace(std::apply(f, args));
        }
        inject_soft_error();
    } catch (...) {
        out.reset();
        count(&counter_slot::task_exceptions);
        last = std::current_exception();
        return false;
    }
    if (passes(valid, *out, last)) return true;
    out.reset();
    return false;
}

/// Up to `n` attempts of f as replica `replica` of the task whose shared
/// scope is `task`; the first valid result is returned and its attempt's
/// deferred effects are moved to `accepted` (the caller commits them once the
/// result is chosen). Else `last` holds the last failure and the result is
/// empty.
template <class R, class F, class Tuple, class Valid>
std::optional<stored_t<R>> replay_attempts(std::size_t n, std::size_t first_attempt, std::size_t replica, F& f,
                                           const Tuple& args, Valid& valid, std::exception_ptr& last,
                                           resilient_task_scope& task, attempt_effects& accepted) noexcept {
    std::optional<stored_t<R>> out;
    for (std::size_t a = 0; a < n; ++a) {
        if (a > 0) count(&counter_slot::replays);
        attempt_marker mark(first_attempt + a, replica);
        attempt_effects effects(&task);
        bool ok;
        {
            effects_marker collect(&effects);
            ok = attempt_once<R>(f, args, valid, out, last);
        }
        if (ok) {
            accepted = std::move(effects);
            break;
        }
    }
    return out;
}

/// The body of a replayed task: the result, or replay_exhausted.
template <class R, class F, class Tuple, class Valid>
R replay_body(std::size_t n, F& f, const Tuple& args, Valid& valid) {
    std::exception_ptr last;
    resilient_task_scope task;
    attempt_effects accepted(&task);
    auto out = replay_attempts<R>(n, 0, 0, f, args, valid, last, task, accepted);
    if (!out) {
        std::rethrow_exception(failed_for_good(nest<replay_exhausted>(last, n)));
    }
    accepted.commit();
    if constexpr (!std::is_void_v<R>) return std::move(*out);
}

inline void check_count(std::size_t n, const char* what) {
    if (n == 0) throw invalid_argument(std::string("rampart: ") + what + " must be at least 1");
}

}  // namespace rampart::detail
