#include <rampart/task/counters.hpp>

#include <deque>
#include <mutex>
#include <sstream>

namespace rampart {
namespace {

struct registry {
    std::mutex mutex;
    std::deque<detail::counter_slot> slots;  // stable addresses; outlive their threads
    counters baseline;
};

registry& the_registry() {
    static registry r;
    return r;
}

counters sum_locked(registry& r) {
    counters c;
    for (auto& s : r.slots)
        c = c + counters::from_array(
                    {s.tasks.load(std::memory_order_relaxed), s.replays.load(std::memory_order_relaxed),
                     s.replicas_launched.load(std::memory_order_relaxed), s.votes_lost.load(std::memory_order_relaxed),
                     s.validations_failed.load(std::memory_order_relaxed),
                     s.corrections_applied.load(std::memory_order_relaxed),
                     s.task_exceptions.load(std::memory_order_relaxed), s.exhausted.load(std::memory_order_relaxed),
                     s.faults_injected.load(std::memory_order_relaxed)});
    return c;
}

}  // namespace

namespace detail {
counter_slot& register_counter_slot() {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    return r.slots.emplace_back();
}
}  // namespace detail

counters read_counters() {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    return sum_locked(r) - r.baseline;
}

void reset_counters() {
    auto& r = the_registry();
    std::lock_guard lock(r.mutex);
    r.baseline = sum_locked(r);
}

std::string counters::to_json() const {
    std::ostringstream o;
    o << "{\"tasks\":" << tasks << ",\"replays\":" << replays << ",\"replicas_launched\":" << replicas_launched
      << ",\"votes_lost\":" << votes_lost << ",\"validations_failed\":" << validations_failed
      << ",\"corrections_applied\":" << corrections_applied << ",\"task_exceptions\":" << task_exceptions
      << ",\"exhausted\":" << exhausted << ",\"faults_injected\":" << faults_injected << "}";
    return o.str();
}

}  // namespace rampart
