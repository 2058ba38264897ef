#include <rampart/task/detail/scheduler.hpp>

#include <stdexcept>
#include <thread>

namespace rampart::detail {

scheduler::scheduler(int threads)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      // One slot is kept for the thread that waits (main), as in HPX where
      // main is one of the worker threads.
      arena_(threads_, 1) {
    if (global_) throw std::logic_error("rampart: a rampart::runtime exists already in this process");
    arena_.initialize();
    global_ = this;
}

scheduler::~scheduler() {
    wait_all();
    global_ = nullptr;
}

scheduler& scheduler::get() {
    if (!global_)
        throw std::logic_error("rampart: no rampart::runtime is alive; create one at the start of main");
    return *global_;
}

void scheduler::wait_all() {
    execute([this] { group_.wait(); });
}

}  // namespace rampart::detail
