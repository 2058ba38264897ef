#include <rampart/task/config.hpp>
#include <rampart/task/runtime.hpp>

#include <atomic>

namespace rampart {

namespace {
std::atomic<void (*)()> start_hook{nullptr};
}

void detail::set_runtime_start_hook(void (*hook)()) { start_hook.store(hook); }

runtime::runtime(int threads) {
    if (threads < 0) throw std::invalid_argument("rampart: runtime thread count must not be negative");
    // Read always, so that a misspelt RAMPART_* variable is reported.
    environment_config env = read_environment_config();
    if (threads == 0) threads = env.threads.value_or(0);
    sched_ = std::make_unique<detail::scheduler>(threads);
    if (auto hook = start_hook.load()) hook();
}

runtime::~runtime() = default;

int runtime::threads() const noexcept { return sched_->threads(); }

}  // namespace rampart
