#include <rampart/task/config.hpp>
#include <rampart/task/errors.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/runtime_hooks.hpp>

#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

namespace rampart {

namespace {
std::atomic<void (*)()> start_hook{nullptr};
std::atomic<void (*)(bool)> end_hook{nullptr};
std::atomic<void (*)(std::exception_ptr)> task_failure_hook{nullptr};
}  // namespace

void set_runtime_start_hook(void (*hook)()) { start_hook.store(hook); }
void set_runtime_end_hook(void (*hook)(bool)) { end_hook.store(hook); }
void set_task_failure_hook(void (*hook)(std::exception_ptr)) { task_failure_hook.store(hook); }
void at_runtime_shutdown(std::function<void()> f) { detail::scheduler::get().on_shutdown(std::move(f)); }
void detail::task_failed_for_good(const std::exception_ptr& cause) {
    if (auto hook = task_failure_hook.load()) hook(cause);
}

runtime::runtime(int threads) : uncaught_(std::uncaught_exceptions()) {
    if (threads < 0) throw rampart::invalid_argument("rampart: runtime thread count must not be negative");
    // Read always, so that a misspelt RAMPART_* variable is reported.
    environment_config env = read_environment_config();
    static std::once_flag warned;  // once per process, however many runtimes it makes
    std::call_once(warned, [&] {
        for (const auto& w : env.warnings) std::fprintf(stderr, "%s\n", w.c_str());
    });
    if (threads == 0) threads = env.threads.value_or(0);
    sched_ = std::make_unique<detail::scheduler>(threads);
    if (auto hook = start_hook.load()) hook();
}

runtime::~runtime() {
    // An exception leaves the program while tasks and other ranks may wait on
    // this one: the job ends before the tasks are waited for.
    if (auto hook = end_hook.load()) hook(std::uncaught_exceptions() > uncaught_);
}

std::string describe(const std::exception_ptr& e) {
    if (!e) return "no exception";
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return x.what();
    } catch (...) {
        return "an exception not derived from std::exception";
    }
}

int runtime::threads() const noexcept { return sched_->threads(); }

}  // namespace rampart
