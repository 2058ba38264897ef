#pragma once
// What a run did, counted per thread without shared cache lines and summed on
// demand.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rampart {

/// Totals since the start of the process (or the last reset_counters()).
struct counters {
    std::uint64_t tasks = 0;                ///< tasks created by async, dataflow and their resilient forms
    std::uint64_t replays = 0;              ///< re-executions after a failure
    std::uint64_t replicas_launched = 0;    ///< copies started by the replicate forms
    std::uint64_t votes_lost = 0;           ///< replica results that differed from the voted result
    std::uint64_t validations_failed = 0;   ///< results rejected by a validator or check
    std::uint64_t corrections_applied = 0;  ///< results repaired by an ABFT correction
    std::uint64_t task_exceptions = 0;      ///< exceptions caught from resilient task bodies
    std::uint64_t exhausted = 0;            ///< resilient tasks that gave up
    std::uint64_t faults_injected = 0;      ///< attempts failed on purpose at RAMPART_ERROR_RATE

    static constexpr std::size_t field_count = 9;

    /// One JSON object, e.g. {"tasks":10,"replays":1,...}.
    std::string to_json() const;

    /// The fields in declaration order, e.g. to send them to another rank.
    ///
    ///     auto since = rampart::read_counters() - before;
    std::array<std::uint64_t, field_count> to_array() const {
        return {tasks,           replays,   replicas_launched, votes_lost, validations_failed, corrections_applied,
                task_exceptions, exhausted, faults_injected};
    }
    static counters from_array(const std::array<std::uint64_t, field_count>& a) {
        return {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]};
    }
    friend counters operator-(const counters& a, const counters& b) {
        auto x = a.to_array(), y = b.to_array();
        for (std::size_t i = 0; i < x.size(); ++i) x[i] -= y[i];
        return from_array(x);
    }
    friend counters operator+(const counters& a, const counters& b) {
        auto x = a.to_array(), y = b.to_array();
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
        return from_array(x);
    }
};

/// Reads the counters; exact once the tasks of interest have finished.
counters read_counters();

/// Starts counting from zero.
void reset_counters();

namespace detail {

struct counter_slot {
    std::atomic<std::uint64_t> tasks{0}, replays{0}, replicas_launched{0}, votes_lost{0}, validations_failed{0},
        corrections_applied{0}, task_exceptions{0}, exhausted{0}, faults_injected{0};
};

counter_slot& register_counter_slot();

inline counter_slot& my_counter_slot() {
    static thread_local counter_slot* slot = nullptr;
    if (!slot) [[unlikely]]
        slot = &register_counter_slot();
    return *slot;
}

/// Adds n to one counter of the calling thread; only that thread writes it.
inline void count(std::atomic<std::uint64_t> counter_slot::*which, std::uint64_t n = 1) noexcept {
    auto& c = my_counter_slot().*which;
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace rampart
