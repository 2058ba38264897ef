#pragma once
// The exceptions of the resilience layer. Those that end a resilient task nest
// the last failure, so std::rethrow_if_nested(e) reaches the cause.

#include <rampart/task/errors.hpp>

#include <cstddef>
#include <exception>
#include <string>

namespace rampart {

/// A resilient task failed for good; nests the last failure. A task whose
/// input was such a failure fails with the same cause: its message names
/// that cause once, not the whole chain of tasks.
class task_failed : public error, public std::nested_exception {
public:
    /// What made the last attempt fail (for a chain of failed tasks, what
    /// made the first one fail).
    const std::string& cause() const noexcept { return cause_; }

protected:
    task_failed(const std::string& what, const std::string& cause) : error(what + cause), cause_(cause) {}

private:
    std::string cause_;
};

/// A replayed task failed in every attempt; nests the last failure.
class replay_exhausted : public task_failed {
public:
    explicit replay_exhausted(std::size_t attempts, const std::string& last);
    std::size_t attempts() const noexcept { return attempts_; }

private:
    std::size_t attempts_;
};

/// Every replica of a replicated task failed; nests the last failure.
class replicate_failed : public task_failed {
public:
    explicit replicate_failed(std::size_t replicas, const std::string& last);
};

/// A result was rejected by its validator or check.
class validation_failed : public error {
public:
    validation_failed();
};

/// A validator or check threw instead of answering; nests what it threw.
class validator_error : public error, public std::nested_exception {
public:
    explicit validator_error(const std::string& what_it_threw);
};

/// The vote over the replicas' results produced no result (no majority).
class vote_failed : public error {
public:
    explicit vote_failed(std::size_t results);
};

/// A fault made on purpose by a fault_injector.
class injected_fault : public error {
public:
    injected_fault();
};

namespace detail {

/// describe(e), but for a task_failed its cause(): what a task that failed
/// on it reports, so that messages do not nest along a chain of tasks.
std::string failure_cause(const std::exception_ptr& e);

/// Builds E(args..., failure_cause(cause)) with `cause` nested in it.
template <class E, class... A>
std::exception_ptr nest(const std::exception_ptr& cause, A&&... args) {
    std::string text = failure_cause(cause);
    try {
        std::rethrow_exception(cause);
    } catch (...) {
        return std::make_exception_ptr(E(std::forward<A>(args)..., text));
    }
}

/// A resilient task failed for good with `e`: counted, and reported to the
/// runtime (in a job of several ranks that ends the job). Returns `e`.
std::exception_ptr failed_for_good(std::exception_ptr e);

}  // namespace detail
}  // namespace rampart
