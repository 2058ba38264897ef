#include <rampart/resilience/fault_injection.hpp>

#include <rampart/resilience/detail/attempt.hpp>
#include <rampart/task/config.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace rampart {
namespace {

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64 finaliser
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

fault_injector::fault_injector(double rate, std::uint64_t seed) : rate_(rate), seed_(seed) {
    if (!(rate >= 0.0 && rate <= 1.0))
        throw invalid_argument("rampart: fault rate must be in [0, 1], got " + std::to_string(rate));
    // rate * 2^64, saturating at 1.0 (every draw hits).
    threshold_ =
        rate >= 1.0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(std::ldexp(rate, 64));
}

std::uint64_t fault_injector::draw(std::uint64_t key, std::uint64_t stream) const noexcept {
    std::uint64_t h = mix(seed_ ^ mix(key));
    h = mix(h ^ (static_cast<std::uint64_t>(this_task::attempt()) << 32 | this_task::replica()));
    return mix(h ^ stream);
}

bool fault_injector::hits(std::uint64_t key) const noexcept {
    if (threshold_ == 0) return false;
    return rate_ >= 1.0 || draw(key, 0) < threshold_;
}

void fault_injector::maybe_throw(std::uint64_t key) {
    if (!hits(key)) return;
    injected_.fetch_add(1, std::memory_order_relaxed);
    throw injected_fault();
}

bool fault_injector::maybe_flip_bit(std::span<std::byte> bytes, std::uint64_t key) {
    if (bytes.empty() || !hits(key)) return false;
    std::uint64_t bit = draw(key, 1) % (bytes.size() * 8);
    bytes[bit / 8] ^= std::byte{static_cast<unsigned char>(1u << (bit % 8))};
    injected_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

namespace detail {

void inject_soft_error() {
    // Read once: the runtime has checked the environment already.
    static const std::optional<fault_injector> faults = []() -> std::optional<fault_injector> {
        try {
            auto c = read_environment_config();
            if (c.error_rate > 0) return std::optional<fault_injector>(std::in_place, c.error_rate, c.seed);
        } catch (const std::exception&) {}
        return std::nullopt;
    }();
    if (!faults) return;
    // Each attempt draws with a key of its own; which attempts fail then
    // depends on the order in which they start, which is all a soft error
    // needs (the result does not).
    static std::atomic<std::uint64_t> next_key{0};
    if (!faults->hits(next_key.fetch_add(1, std::memory_order_relaxed))) return;
    count(&counter_slot::faults_injected);
    throw injected_fault();
}

}  // namespace detail
}  // namespace rampart
