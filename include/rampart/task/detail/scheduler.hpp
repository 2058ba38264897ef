#pragma once
// The one place that talks to oneTBB: an arena with a fixed number of threads
// and a task_group that owns every task rampart spawns, so that shutdown can
// wait for all of them.

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace rampart::detail {

class finish_scope;

/// What a task carries with it on its thread: the finish block it belongs to
/// and, inside a resilient task, which attempt and replica is running and the
/// resilient scope that collects deferred effects. Saved and restored
/// whenever a task starts, ends or is suspended.
struct task_context {
    finish_scope* finish = nullptr;
    std::uint32_t attempt = 0;
    std::uint32_t replica = 0;
    void* resilient_scope = nullptr;
};

class scheduler {
public:
    explicit scheduler(int threads);
    ~scheduler();
    scheduler(const scheduler&) = delete;
    scheduler& operator=(const scheduler&) = delete;

    /// The scheduler of the live runtime; throws std::logic_error without one.
    static scheduler& get();
    static scheduler* instance() noexcept { return global_; }

    /// True when the calling thread is executing inside this scheduler's arena.
    bool inside() const noexcept { return tls_current_ == this; }

    int threads() const noexcept { return threads_; }

    /// Runs f as a new task. `scope` (may be null) is the finish scope the task
    /// belongs to; it must already have been entered for this task.
    template <class F>
    void spawn(finish_scope* scope, F&& f);

    /// Runs f on the calling thread inside the arena and returns its result.
    template <class F>
    decltype(auto) execute(F&& f) {
        return arena_.execute([this, &f]() -> decltype(auto) {
            inside_marker mark(this);
            return std::forward<F>(f)();
        });
    }

    /// Marks the calling thread as running inside this scheduler until the
    /// marker is destroyed. Every task and every execute() sets one, so no
    /// oneTBB observer is needed.
    class inside_marker {
    public:
        explicit inside_marker(const scheduler* s) noexcept : saved_(tls_current_) { tls_current_ = s; }
        ~inside_marker() { tls_current_ = saved_; }
        inside_marker(const inside_marker&) = delete;
        inside_marker& operator=(const inside_marker&) = delete;

    private:
        const scheduler* saved_;
    };

    /// Waits until every spawned task has finished.
    void wait_all();

    static task_context& context() noexcept { return tls_context_; }
    static finish_scope*& current_finish() noexcept { return tls_context_.finish; }

private:
    int threads_;
    oneapi::tbb::task_arena arena_;
    oneapi::tbb::task_group group_;

    static inline scheduler* global_ = nullptr;
    static inline thread_local const scheduler* tls_current_ = nullptr;
    static inline thread_local task_context tls_context_{};
};

}  // namespace rampart::detail

#include <rampart/task/detail/finish_scope.hpp>

namespace rampart::detail {

/// The functor handed to oneTBB, which calls it as const; the task body runs
/// once and may consume what it holds.
template <class F>
struct task_body {
    finish_scope* scope;
    mutable F fn;

    void operator()() const {
        // The task runs in the finish scope it was created in, so the tasks it
        // spawns are waited for by the same finish.
        scheduler::inside_marker mark(scheduler::instance());
        task_context saved = scheduler::context();
        scheduler::context() = task_context{scope};
        fn();
        scheduler::context() = saved;
        if (scope) scope->leave();
    }
};

template <class F>
void scheduler::spawn(finish_scope* scope, F&& f) {
    // defer() builds the oneTBB task, counted by the group, without running it.
    auto handle = group_.defer(task_body<std::decay_t<F>>{scope, std::forward<F>(f)});
    if (inside())
        group_.run(std::move(handle));
    else
        arena_.enqueue(std::move(handle));
}

}  // namespace rampart::detail

namespace rampart::detail {

inline finish_scope* enter_current_finish() noexcept {
    finish_scope* s = scheduler::current_finish();
    if (s) s->enter();
    return s;
}

}  // namespace rampart::detail
