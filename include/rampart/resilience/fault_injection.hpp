#pragma once
// Faults on purpose, for tests, benchmarks and demos: a task that throws, or
// one flipped bit in a task's output. Decisions are a pure function of
// (seed, key, attempt, replica), so a run is reproducible whatever the
// scheduling, and a replay or another replica of the same task gets an
// independent draw.

#include <rampart/resilience/errors.hpp>
#include <rampart/resilience/this_task.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace rampart {

/// Injects faults at a given rate.
///
///     rampart::fault_injector inject(0.01, /*seed=*/42);
///     auto f = rampart::async_replay(5, [&](int i) {
///         inject.maybe_throw(i);            // throws injected_fault 1% of the time
///         return compute(i);
///     }, i);
///
/// Thread-safe.
class fault_injector {
public:
    /// rate: probability in [0, 1] that a decision hits.
    fault_injector(double rate, std::uint64_t seed);

    double rate() const noexcept { return rate_; }
    std::uint64_t seed() const noexcept { return seed_; }

    /// Whether the fault for `key` hits in the current attempt and replica.
    bool hits(std::uint64_t key) const noexcept;

    /// Throws injected_fault when hits(key).
    void maybe_throw(std::uint64_t key);

    /// Flips one bit, chosen from the key, of `bytes` when hits(key). Returns
    /// whether it flipped.
    bool maybe_flip_bit(std::span<std::byte> bytes, std::uint64_t key);

    template <class T>
    requires std::is_trivially_copyable_v<T>
    bool maybe_flip_bit(T& value, std::uint64_t key) {
        return maybe_flip_bit(std::as_writable_bytes(std::span<T, 1>(&value, 1)), key);
    }

    template <class T>
    requires std::is_trivially_copyable_v<T>
    bool maybe_flip_bit(std::vector<T>& values, std::uint64_t key) {
        return maybe_flip_bit(std::as_writable_bytes(std::span<T>(values)), key);
    }

    /// How many faults this injector made.
    std::uint64_t injected() const noexcept { return injected_.load(std::memory_order_relaxed); }

private:
    std::uint64_t draw(std::uint64_t key, std::uint64_t stream) const noexcept;

    double rate_;
    std::uint64_t seed_;
    std::uint64_t threshold_;  // hits when draw < threshold_
    std::atomic<std::uint64_t> injected_{0};
};

}  // namespace rampart
