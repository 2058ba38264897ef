#pragma once
// The state of one replicated task: n copies run as separate tasks, each may
// replay on its own failures, and the last one to finish decides the result
// (first valid result in replica order, or a vote over the valid results).
// When a vote finds no majority and replays remain, all copies run again.

#include <rampart/resilience/detail/attempt.hpp>
#include <rampart/resilience/vote.hpp>
#include <rampart/task/detail/scheduler.hpp>
#include <rampart/task/detail/shared_state.hpp>

#include <atomic>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace rampart::detail {

/// The vote of the non-voting forms: "take the first valid result".
struct first_valid {};

template <class Vote>
inline constexpr bool votes_v = !std::is_same_v<std::decay_t<Vote>, first_valid>;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

struct replicate_policy {
    std::size_t replicas = 1;
    std::size_t replays = 1;  // attempts per copy, and rounds when a vote fails
};

template <class R, class F, class Tuple, class Valid, class Vote>
class replicate_frame {
public:
    using value_type = stored_t<R>;

    template <class F2, class Tuple2, class Valid2, class Vote2>
    replicate_frame(replicate_policy p, F2&& f, Tuple2&& args, Valid2&& valid, Vote2&& vote, shared_state<R>* out,
                    finish_scope* scope)
        : policy_(p),
          f_(std::forward<F2>(f)),
          args_(std::forward<Tuple2>(args)),
          valid_(std::forward<Valid2>(valid)),
          vote_(std::forward<Vote2>(vote)),
          out_(out),
          scope_(scope),
          slots_(p.replicas) {}

    /// Spawns every copy. The frame deletes itself after deciding.
    void launch_round() {
        // The copies may finish and delete the frame before this loop ends, so
        // nothing of *this is read once the first copy is spawned.
        const std::size_t n = policy_.replicas;
        finish_scope* const scope = scope_;
        remaining_.store(n, std::memory_order_relaxed);
        count(&counter_slot::replicas_launched, n);
        auto& s = scheduler::get();
        for (std::size_t i = 0; i < n; ++i) {
            if (scope) scope->enter();
            s.spawn(scope, [this, i]() noexcept { run_copy(i); });
        }
    }

private:
    struct slot {
        std::optional<value_type> value;
        std::exception_ptr error;
        attempt_effects effects{nullptr};  // of the attempt that gave `value`
    };

    void run_copy(std::size_t i) noexcept {
        slot& s = slots_[i];
        s.value = replay_attempts<R>(policy_.replays, round_ * policy_.replays, i, f_, args_, valid_, s.error, task_,
                                     s.effects);
        if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) decide();
    }

    void decide() noexcept {
        std::exception_ptr last;
        std::size_t valid_results = 0;
        for (auto& s : slots_) {
            if (!s.value && s.error) last = s.error;
            valid_results += s.value ? 1 : 0;
        }
        if (valid_results == 0)
            return finish_with_error(failed_for_good(nest<replicate_failed>(last, policy_.replicas)));
        if constexpr (!votes_v<Vote>) {
            for (auto& s : slots_)
                if (s.value) {
                    s.effects.commit();  // only the chosen copy's messages leave
                    return finish_with_value(std::move(*s.value));
                }
        } else {
            decide_by_vote(valid_results);
        }
    }

    void decide_by_vote(std::size_t valid_results) noexcept {
        static_assert(!std::is_void_v<R>, "rampart: a vote needs a result type");
        std::vector<value_type> results;
        results.reserve(valid_results);
        for (auto& s : slots_)
            if (s.value) results.push_back(*s.value);
        std::optional<value_type> winner;
        try {
            using vote_result = std::invoke_result_t<Vote&, std::vector<value_type>&&>;
            if constexpr (is_optional<std::decay_t<vote_result>>::value)
                winner = vote_(std::move(results));
            else
                winner.emplace(vote_(std::move(results)));
        } catch (...) {
            return finish_with_error(failed_for_good(std::current_exception()));
        }
        if (!winner) {
            if (++round_ < policy_.replays) return run_again();
            return finish_with_error(failed_for_good(std::make_exception_ptr(vote_failed(valid_results))));
        }
        commit_a_winning_copy(*winner);
        return finish_with_value(std::move(*winner));
    }

    // No majority, and rounds remain: every copy runs again.
    void run_again() noexcept {
        count(&counter_slot::replays, policy_.replicas);
        for (auto& s : slots_) {
            s.value.reset();
            s.error = nullptr;
            s.effects.discard();
        }
        launch_round();
    }

    // The messages of one copy that voted for the winner leave; the others'
    // are dropped.
    void commit_a_winning_copy(const value_type& winner) noexcept {
        if constexpr (std::equality_comparable<value_type>) {
            std::uint64_t lost = 0;
            bool committed = false;
            for (auto& s : slots_) {
                if (!s.value) continue;
                if (!(*s.value == winner)) {
                    ++lost;
                } else if (!committed) {
                    s.effects.commit();
                    committed = true;
                }
            }
            if (lost) count(&counter_slot::votes_lost, lost);
        } else {
            // Without == the winner cannot be traced to a copy; the first
            // valid copy's messages leave.
            for (auto& s : slots_)
                if (s.value) {
                    s.effects.commit();
                    break;
                }
        }
    }

    void finish_with_value(value_type&& v) noexcept {
        std::unique_ptr<replicate_frame> self(this);
        out_->set_from([&]() -> R {
            if constexpr (!std::is_void_v<R>) return std::move(v);
        });
        out_->release();
    }

    void finish_with_error(std::exception_ptr e) noexcept {
        std::unique_ptr<replicate_frame> self(this);
        try {
            out_->set_exception(std::move(e));
        } catch (...) {}
        out_->release();
    }

    replicate_policy policy_;
    F f_;
    Tuple args_;
    Valid valid_;
    Vote vote_;
    shared_state<R>* out_;
    finish_scope* scope_;
    resilient_task_scope task_;  // shared by every copy and round
    std::vector<slot> slots_;
    std::atomic<std::size_t> remaining_{0};
    std::size_t round_ = 0;
};

/// Creates the frame and its result future; `start(frame)` launches it now or
/// when inputs are ready.
template <class R, class F, class Tuple, class Valid, class Vote>
auto make_replicate_frame(replicate_policy p, F&& f, Tuple&& args, Valid&& valid, Vote&& vote, shared_state<R>* out) {
    using frame_t = replicate_frame<R, std::decay_t<F>, std::decay_t<Tuple>, std::decay_t<Valid>, std::decay_t<Vote>>;
    return new frame_t(p, std::forward<F>(f), std::forward<Tuple>(args), std::forward<Valid>(valid),
                       std::forward<Vote>(vote), out, scheduler::current_finish());
}

}  // namespace rampart::detail
