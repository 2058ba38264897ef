#pragma once
// The one place that talks to oneTBB: an arena with a fixed number of threads
// in which rampart's tasks run. Tasks are oneTBB tasks of our own (the
// `d1::task` interface that tbb::task_group is built on) so that spawning one
// touches no shared counter: each thread counts what it spawns and completes
// in its own cache line, and shutdown waits until the sums agree.

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

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

    /// Waits until every spawned task has finished; the calling thread runs
    /// tasks meanwhile.
    void wait_all();

    /// Registers f to run when the runtime shuts down, after every task has
    /// finished; later registrations run first. Used by layers that own
    /// threads or MPI (the communication engine).
    void on_shutdown(std::function<void()> f);

    /// Per-thread counts of spawned and completed tasks (single writer each).
    struct alignas(64) thread_counts {
        std::atomic<std::uint64_t> spawned{0};
        std::atomic<std::uint64_t> completed{0};
    };
    thread_counts& my_counts();
    /// True when every task spawned so far has completed.
    bool quiescent();

    oneapi::tbb::task_group_context& context_of_tasks() noexcept { return tasks_context_; }
    oneapi::tbb::task_arena& arena() noexcept { return arena_; }

    static task_context& context() noexcept { return tls_context_; }
    static finish_scope*& current_finish() noexcept { return tls_context_.finish; }

private:
    int threads_;
    std::optional<oneapi::tbb::global_control> worker_limit_;
    oneapi::tbb::task_arena arena_;
    // Isolated: rampart's tasks are never cancelled from a caller's context.
    oneapi::tbb::task_group_context tasks_context_{oneapi::tbb::task_group_context::isolated};
    std::vector<std::function<void()>> shutdown_hooks_;
    std::mutex counts_mutex_;
    std::deque<thread_counts> counts_;  // stable addresses

    static inline scheduler* global_ = nullptr;
    static inline thread_local const scheduler* tls_current_ = nullptr;
    static inline thread_local task_context tls_context_{};
};

}  // namespace rampart::detail

#include <rampart/task/detail/finish_scope.hpp>

namespace rampart::detail {

static_assert(TBB_VERSION_MAJOR == 2021, "rampart's scheduler uses oneTBB 2021's task interface (d1::task)");

/// One rampart task as a oneTBB task: runs its body once, in the finish scope
/// and on the thread marked as inside the scheduler, then frees itself.
template <class F>
class tbb_task final : public oneapi::tbb::detail::d1::task {
public:
    template <class G>
    tbb_task(G&& fn, finish_scope* scope, scheduler* s, oneapi::tbb::detail::d1::small_object_allocator& alloc)
        : alloc_(alloc), scope_(scope), sched_(s), fn_(std::forward<G>(fn)) {}

    oneapi::tbb::detail::d1::task* execute(oneapi::tbb::detail::d1::execution_data& ed) override {
        run();
        alloc_.delete_object(this, ed);
        return nullptr;
    }
    // The context is isolated and never cancelled; should oneTBB cancel
    // anyway, the body still runs, so that no future is left unset.
    oneapi::tbb::detail::d1::task* cancel(oneapi::tbb::detail::d1::execution_data& ed) override { return execute(ed); }

private:
    void run() noexcept {
        scheduler* s = sched_;
        scheduler::inside_marker mark(s);
        task_context saved = scheduler::context();
        // The task runs in the finish scope it was created in, so the tasks it
        // spawns are waited for by the same finish.
        scheduler::context() = task_context{scope_};
        fn_();
        scheduler::context() = saved;
        finish_scope* scope = scope_;
        auto& done = s->my_counts().completed;
        done.store(done.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        if (scope) scope->leave();
    }

    oneapi::tbb::detail::d1::small_object_allocator alloc_;
    finish_scope* scope_;
    scheduler* sched_;
    F fn_;
};

template <class F>
void scheduler::spawn(finish_scope* scope, F&& f) {
    using task_t = tbb_task<std::decay_t<F>>;
    oneapi::tbb::detail::d1::small_object_allocator alloc{};
    task_t* t = alloc.new_object<task_t>(std::forward<F>(f), scope, this, alloc);
    auto& spawned = my_counts().spawned;
    spawned.store(spawned.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (inside())
        oneapi::tbb::detail::d1::spawn(*t, tasks_context_);  // this thread's own deque
    else
        oneapi::tbb::detail::r1::enqueue(*t, tasks_context_, &arena_);
}

}  // namespace rampart::detail

namespace rampart::detail {

inline finish_scope* enter_current_finish() noexcept {
    finish_scope* s = scheduler::current_finish();
    if (s) s->enter();
    return s;
}

}  // namespace rampart::detail
