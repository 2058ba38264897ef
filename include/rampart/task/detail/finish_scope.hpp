#pragma once
// Counts the tasks created inside a `finish` block, transitively, so that the
// block can wait for all of them.

#include <rampart/task/detail/shared_state.hpp>

#include <atomic>
#include <cstddef>

namespace rampart::detail {

class finish_scope {
public:
    finish_scope() : done_(new shared_state<void>(1)) {}
    finish_scope(const finish_scope&) = delete;
    finish_scope& operator=(const finish_scope&) = delete;

    void enter() noexcept { count_.fetch_add(1, std::memory_order_relaxed); }

    void leave() noexcept {
        if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            // The waiter may destroy *this as soon as the state is ready, so
            // keep the state alive on our own reference.
            state_ptr<shared_state<void>> done = done_;
            done->set_value();
        }
    }

    /// Called once the block's own body has returned.
    void wait() {
        leave();
        done_->wait();
    }

private:
    std::atomic<std::size_t> count_{1};
    state_ptr<shared_state<void>> done_;
};

/// Enters the calling thread's current finish scope, if any, and returns it.
inline finish_scope* enter_current_finish() noexcept;

}  // namespace rampart::detail
