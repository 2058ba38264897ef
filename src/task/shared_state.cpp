#include <rampart/task/detail/scheduler.hpp>
#include <rampart/task/detail/shared_state.hpp>

#include <oneapi/tbb/scalable_allocator.h>
#include <oneapi/tbb/task.h>

#include <new>

namespace rampart::detail {

void* state_base::operator new(std::size_t bytes) {
    if (void* p = scalable_malloc(bytes)) return p;
    throw std::bad_alloc();
}

void state_base::operator delete(void* p) noexcept { scalable_free(p); }

void state_base::publish() noexcept {
    std::uintptr_t head = head_.exchange(ready_tag, std::memory_order_acq_rel);
    // The list was built by pushing at the front; run it in attach order.
    continuation* reversed = nullptr;
    for (auto* c = reinterpret_cast<continuation*>(head); c;) {
        continuation* next = c->next;
        c->next = reversed;
        reversed = c;
        c = next;
    }
    while (reversed) {
        continuation* next = reversed->next;
        reversed->run();
        reversed = next;
    }
    head_.notify_all();
}

namespace {

struct resumer final : continuation {
    oneapi::tbb::task::suspend_point point{};
    void run() noexcept override { oneapi::tbb::task::resume(point); }
};

}  // namespace

void state_base::wait() {
    if (ready()) return;
    scheduler* s = scheduler::instance();
    if (s && s->inside()) {
        // Suspend this task; the thread goes on with other tasks until the
        // state is ready and resumes us.
        task_context saved = scheduler::context();
        // ready() after the resume is an acquire load that pairs with
        // publish(), so the value is ordered by our own atomics rather than by
        // oneTBB's internals.
        while (!ready()) {
            resumer r;
            oneapi::tbb::task::suspend([&](oneapi::tbb::task::suspend_point sp) {
                r.point = sp;
                attach(&r);
            });
        }
        scheduler::context() = saved;
        return;
    }
    if (s) {
        // Join the arena so that this thread, too, runs tasks while it waits.
        s->execute([this] { wait(); });
        return;
    }
    std::uintptr_t head = head_.load(std::memory_order_acquire);
    while (head != ready_tag) {
        head_.wait(head, std::memory_order_acquire);
        head = head_.load(std::memory_order_acquire);
    }
}

}  // namespace rampart::detail
