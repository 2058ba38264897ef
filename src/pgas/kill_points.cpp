// The test hook of kill_hook.hpp: real crashes at chosen steps of a write.

#include "kill_points.hpp"

#include <rampart/pgas/detail/kill_hook.hpp>
#include <rampart/task/errors.hpp>

#include <array>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string_view>

namespace rampart::pgas::detail {

namespace {
std::atomic<int> kill_at{0};  // a kill_step; 0 when unset
std::atomic<std::int64_t> kill_countdown{0};
std::atomic<int> kill_block_rank{-1};
constexpr std::array<std::string_view, 6> step_names{"",        "in_primary",    "between",
                                                     "before_forward", "after_forward", "before_answer"};
}  // namespace

kill_step kill_now(int primary_rank) {
    const int step = kill_at.load(std::memory_order_relaxed);
    if (step == 0 || primary_rank != kill_block_rank.load()) return kill_step::none;
    if (kill_countdown.fetch_sub(1) != 1) return kill_step::none;
    return static_cast<kill_step>(step);
}

void die(int me, const char* step) {
    std::printf("rank %d: dies %s\n", me, step);
    std::fflush(nullptr);
    std::raise(SIGKILL);
    for (;;) {}
}

void kill_during_write(const std::string& step, std::uint64_t nth, int block_rank) {
    int s = 0;
    for (int k = 1; k < static_cast<int>(step_names.size()); ++k)
        if (step == step_names[static_cast<std::size_t>(k)]) s = k;
    if (s == 0 || nth < 1)
        throw rampart::invalid_argument("rampart::pgas: kill_during_write('" + step + "', " + std::to_string(nth) +
                                        "): steps are in_primary, between, before_forward, after_forward and "
                                        "before_answer, nth at least 1");
    kill_block_rank.store(block_rank);
    kill_countdown.store(static_cast<std::int64_t>(nth));
    kill_at.store(s);
}

}  // namespace rampart::pgas::detail
