#include <rampart/task/config.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/errors.hpp>

#include <atomic>
#include <exception>

namespace rampart {

namespace {
std::atomic<void (*)()> start_hook{nullptr};
std::atomic<void (*)(bool)> end_hook{nullptr};
std::atomic<void (*)(std::exception_ptr)> task_failure_hook{nullptr};
}  // namespace

void detail::set_runtime_start_hook(void (*hook)()) { start_hook.store(hook); }
void detail::set_runtime_end_hook(void (*hook)(bool)) { end_hook.store(hook); }
void detail::set_task_failure_hook(void (*hook)(std::exception_ptr)) { task_failure_hook.store(hook); }
void detail::task_failed_for_good(const std::exception_ptr& cause) {
    if (auto hook = task_failure_hook.load()) hook(cause);
}

runtime::runtime(int threads) : uncaught_(std::uncaught_exceptions()) {
    if (threads < 0) throw rampart::invalid_argument("rampart: runtime thread count must not be negative");
    // Read always, so that a misspelt RAMPART_* variable is reported.
    environment_config env = read_environment_config();
    if (threads == 0) threads = env.threads.value_or(0);
    sched_ = std::make_unique<detail::scheduler>(threads);
    if (auto hook = start_hook.load()) hook();
}

runtime::~runtime() {
    // An exception leaves the program while tasks and other ranks may wait on
    // this one: the job ends before the tasks are waited for.
    if (auto hook = end_hook.load()) hook(std::uncaught_exceptions() > uncaught_);
}

int runtime::threads() const noexcept { return sched_->threads(); }

}  // namespace rampart
