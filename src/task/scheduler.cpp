#include <rampart/task/detail/scheduler.hpp>

#include <stdexcept>
#include <thread>

namespace rampart::detail {

scheduler::scheduler(int threads)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      // With one thread the arena has no slot reserved for main (below), so it
      // asks oneTBB for a worker; in a process bound to one core oneTBB
      // allows none and prints a warning. The worker it gets instead finds the
      // one slot taken by main whenever main waits, and then sleeps.
      worker_limit_(threads_ == 1 ? std::optional<oneapi::tbb::global_control>(
                                        std::in_place, oneapi::tbb::global_control::max_allowed_parallelism, 2)
                                  : std::nullopt),
      // One slot is kept for the thread that waits (main), as in HPX where
      // main is one of the worker threads. Not with one thread: oneTBB then
      // adds a slot for a worker whenever a thread outside the arena (the
      // communication engine) enqueues a task, and two threads would compute.
      arena_(threads_, threads_ > 1 ? 1 : 0) {
    if (global_) throw std::logic_error("rampart: a rampart::runtime exists already in this process");
    arena_.initialize();
    global_ = this;
}

scheduler::~scheduler() {
    wait_all();
    std::vector<std::function<void()>> hooks;
    {
        std::lock_guard lock(counts_mutex_);
        hooks.swap(shutdown_hooks_);
    }
    for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)();
    global_ = nullptr;
}

void scheduler::on_shutdown(std::function<void()> f) {
    std::lock_guard lock(counts_mutex_);
    shutdown_hooks_.push_back(std::move(f));
}

scheduler& scheduler::get() {
    if (!global_) throw std::logic_error("rampart: no rampart::runtime is alive; create one at the start of main");
    return *global_;
}

scheduler::thread_counts& scheduler::my_counts() {
    // Cached per thread; re-registered when a new scheduler replaces the old.
    thread_local const scheduler* owner = nullptr;
    thread_local thread_counts* mine = nullptr;
    if (owner != this) [[unlikely]] {
        std::lock_guard lock(counts_mutex_);
        mine = &counts_.emplace_back();
        owner = this;
    }
    return *mine;
}

bool scheduler::quiescent() {
    // Completed first, then spawned: a task's spawn is counted before it can
    // complete, so equal sums mean nothing is queued, running or suspended.
    std::lock_guard lock(counts_mutex_);
    std::uint64_t completed = 0, spawned = 0;
    for (auto& c : counts_) completed += c.completed.load(std::memory_order_acquire);
    for (auto& c : counts_) spawned += c.spawned.load(std::memory_order_acquire);
    return completed == spawned;
}

namespace {

namespace d1 = oneapi::tbb::detail::d1;

// Re-queues itself (behind the other work) until the scheduler is quiescent,
// then releases the waiter.
class quiescence_watch final : public d1::task {
public:
    quiescence_watch(scheduler* s, d1::wait_context* done, d1::small_object_allocator& alloc)
        : s_(s), done_(done), alloc_(alloc) {}

    static void start(scheduler* s, d1::wait_context* done) {
        d1::small_object_allocator alloc{};
        auto* w = alloc.new_object<quiescence_watch>(s, done, alloc);
        oneapi::tbb::detail::r1::enqueue(*w, s->context_of_tasks(), &s->arena());
    }

    d1::task* execute(d1::execution_data& ed) override {
        scheduler* s = s_;
        d1::wait_context* done = done_;
        alloc_.delete_object(this, ed);
        if (s->quiescent()) {
            done->release();
        } else {
            std::this_thread::yield();
            start(s, done);
        }
        return nullptr;
    }
    d1::task* cancel(d1::execution_data& ed) override { return execute(ed); }

private:
    scheduler* s_;
    d1::wait_context* done_;
    d1::small_object_allocator alloc_;
};

}  // namespace

void scheduler::wait_all() {
    execute([this] {
        d1::wait_context done(1);
        quiescence_watch::start(this, &done);
        d1::wait(done, tasks_context_);
    });
}

}  // namespace rampart::detail
