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
    for (auto& s : r.slots) {
        c.tasks += s.tasks.load(std::memory_order_relaxed);
        c.replays += s.replays.load(std::memory_order_relaxed);
        c.replicas_launched += s.replicas_launched.load(std::memory_order_relaxed);
        c.votes_lost += s.votes_lost.load(std::memory_order_relaxed);
        c.validations_failed += s.validations_failed.load(std::memory_order_relaxed);
        c.corrections_applied += s.corrections_applied.load(std::memory_order_relaxed);
        c.task_exceptions += s.task_exceptions.load(std::memory_order_relaxed);
        c.exhausted += s.exhausted.load(std::memory_order_relaxed);
    }
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
    counters c = sum_locked(r);
    const counters& b = r.baseline;
    c.tasks -= b.tasks;
    c.replays -= b.replays;
    c.replicas_launched -= b.replicas_launched;
    c.votes_lost -= b.votes_lost;
    c.validations_failed -= b.validations_failed;
    c.corrections_applied -= b.corrections_applied;
    c.task_exceptions -= b.task_exceptions;
    c.exhausted -= b.exhausted;
    return c;
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
      << ",\"exhausted\":" << exhausted << "}";
    return o.str();
}

}  // namespace rampart
