#pragma once
// Effects of a resilient task that must wait for its verdict. Each attempt
// (or replica) collects effects, such as messages to send, and only the
// attempt whose result is accepted commits them; the others are discarded. A
// task-wide cache lets every attempt and replica see the same inputs from
// outside, such as the k-th message received from a peer.

#include <rampart/task/detail/scheduler.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace rampart::detail {

/// Shared by all attempts and replicas of one resilient task.
class resilient_task_scope {
public:
    /// The object cached under `key`, made by make() on first request.
    template <class T, class Make>
    std::shared_ptr<T> cached(const std::string& key, Make&& make) {
        std::lock_guard lock(mutex_);
        auto& slot = cache_[key];
        if (!slot) slot = std::shared_ptr<void>(make());
        return std::static_pointer_cast<T>(slot);
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<void>> cache_;
};

/// The effects of one attempt of one replica.
class attempt_effects {
public:
    explicit attempt_effects(resilient_task_scope* task) noexcept : task_(task) {}
    attempt_effects(const attempt_effects&) = delete;
    attempt_effects& operator=(const attempt_effects&) = delete;
    attempt_effects(attempt_effects&&) = default;
    attempt_effects& operator=(attempt_effects&& o) noexcept {
        if (this != &o) {
            discard();  // what this held is superseded
            task_ = o.task_;
            effects_ = std::move(o.effects_);
            o.effects_.clear();
            counts_ = std::move(o.counts_);
        }
        return *this;
    }
    ~attempt_effects() { discard(); }

    /// commit runs if this attempt's result is accepted, discard otherwise.
    void defer(std::function<void()> commit, std::function<void()> discard) {
        effects_.emplace_back(std::move(commit), std::move(discard));
    }

    /// How many times this attempt has asked for `what` before (0, 1, ...):
    /// the k-th request of every attempt and replica means the same input.
    int next_index(const std::string& what) { return counts_[what]++; }

    resilient_task_scope& task() noexcept { return *task_; }

    void commit() {
        auto e = std::move(effects_);
        effects_.clear();
        for (auto& [c, d] : e) c();
    }
    void discard() noexcept {
        auto e = std::move(effects_);
        effects_.clear();
        for (auto& [c, d] : e)
            if (d) d();
    }

    /// The attempt running on this thread, if it is one of a resilient task.
    static attempt_effects* current() noexcept {
        return static_cast<attempt_effects*>(scheduler::context().resilient_scope);
    }

private:
    resilient_task_scope* task_;
    std::vector<std::pair<std::function<void()>, std::function<void()>>> effects_;
    std::map<std::string, int> counts_;
};

/// Makes `effects` the current attempt's collector while it lives.
class effects_marker {
public:
    explicit effects_marker(attempt_effects* e) noexcept : saved_(scheduler::context().resilient_scope) {
        scheduler::context().resilient_scope = e;
    }
    ~effects_marker() { scheduler::context().resilient_scope = saved_; }
    effects_marker(const effects_marker&) = delete;
    effects_marker& operator=(const effects_marker&) = delete;

private:
    void* saved_;
};

}  // namespace rampart::detail
