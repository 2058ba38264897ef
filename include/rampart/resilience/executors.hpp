#pragma once
// Executors that make every task they run resilient, so that a whole
// algorithm written with async/dataflow becomes resilient by passing one
// object.

#include <rampart/resilience/replay.hpp>
#include <rampart/resilience/replicate.hpp>

#include <cstddef>
#include <utility>

namespace rampart {

/// Runs each task with replay.
///
///     auto exec = rampart::make_replay_executor(3);
///     auto a = rampart::async(exec, step, x);
///     auto b = rampart::dataflow(exec, combine, std::move(a), other);
template <class Valid = detail::accept_all>
class replay_executor {
public:
    using is_rampart_executor = void;

    explicit replay_executor(std::size_t attempts, Valid valid = {}) : attempts_(attempts), valid_(std::move(valid)) {
        detail::check_count(attempts, "replay count");
    }

    template <class F, class... Args>
    auto async_execute(F&& f, Args&&... args) const {
        return detail::async_replay_impl(attempts_, Valid(valid_), std::forward<F>(f), std::forward<Args>(args)...);
    }
    template <class F, class... Ins>
    auto dataflow_execute(F&& f, Ins&&... ins) const {
        return detail::dataflow_replay_impl(attempts_, Valid(valid_), std::forward<F>(f), std::forward<Ins>(ins)...);
    }

    std::size_t attempts() const noexcept { return attempts_; }

private:
    std::size_t attempts_;
    Valid valid_;
};

/// Runs each task as `replicas` copies, taking the first valid result or
/// voting; each copy replays up to `replays` attempts.
///
///     auto exec = rampart::make_replicate_executor(3, rampart::majority_vote{});
///     auto f = rampart::async(exec, compute, x);
template <class Vote = detail::first_valid, class Valid = detail::accept_all>
class replicate_executor {
public:
    using is_rampart_executor = void;

    replicate_executor(std::size_t replicas, Vote vote = {}, Valid valid = {}, std::size_t replays = 1)
        : policy_{replicas, replays}, vote_(std::move(vote)), valid_(std::move(valid)) {
        detail::check_count(replicas, "replica count");
        detail::check_count(replays, "replay count");
    }

    template <class F, class... Args>
    auto async_execute(F&& f, Args&&... args) const {
        return detail::async_replicate_impl(policy_, Vote(vote_), Valid(valid_), std::forward<F>(f),
                                            std::forward<Args>(args)...);
    }
    template <class F, class... Ins>
    auto dataflow_execute(F&& f, Ins&&... ins) const {
        return detail::dataflow_replicate_impl(policy_, Vote(vote_), Valid(valid_), std::forward<F>(f),
                                               std::forward<Ins>(ins)...);
    }

private:
    detail::replicate_policy policy_;
    Vote vote_;
    Valid valid_;
};

/// A replay executor; with a validator, results it rejects are replayed too.
inline replay_executor<> make_replay_executor(std::size_t attempts) { return replay_executor<>(attempts); }

template <class Valid>
replay_executor<std::decay_t<Valid>> make_replay_executor(std::size_t attempts, Valid&& valid) {
    return replay_executor<std::decay_t<Valid>>(attempts, std::forward<Valid>(valid));
}

/// A replicate executor taking the first copy that does not throw.
inline replicate_executor<> make_replicate_executor(std::size_t replicas) { return replicate_executor<>(replicas); }

/// A replicate executor that votes (and optionally validates, and replays).
template <class Vote, class Valid = detail::accept_all>
replicate_executor<std::decay_t<Vote>, std::decay_t<Valid>> make_replicate_executor(std::size_t replicas, Vote&& vote,
                                                                                    Valid&& valid = {},
                                                                                    std::size_t replays = 1) {
    return {replicas, std::forward<Vote>(vote), std::forward<Valid>(valid), replays};
}

}  // namespace rampart
