// rampart-bench-spawn-floor: what spawning N empty tasks in a loop costs below
// rampart's futures, to tell the runtime's own cost from oneTBB's:
//   "scheduler"  rampart's scheduler (oneTBB d1 tasks, per-thread counts), no futures
//   "task_group" oneTBB's own tbb::task_group::run + wait
// Prints one JSON object per line with --json.

#include "../../apps/common/cli.hpp"

#include <rampart/task/runtime.hpp>

#include <oneapi/tbb/task_group.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    try {
        rampart::cli::options opt(argc, argv, {"json"});
        const std::size_t n = opt.get_uint("tasks", 1000000);
        const int threads = static_cast<int>(opt.get_uint("threads", 1));
        const std::size_t repeat = opt.get_uint("repeat", 3);
        const bool json = opt.flag("json");
        opt.finish();
        if (threads < 1) throw std::invalid_argument("--threads must be at least 1");

        rampart::runtime rt(threads);
        auto& sched = rampart::detail::scheduler::get();
        std::vector<int> out(n);
        for (std::size_t r = 0; r < repeat; ++r) {
            for (const char* kind : {"scheduler", "task_group"}) {
                double s = rt.run([&] {
                    const auto t0 = std::chrono::steady_clock::now();
                    if (std::string(kind) == "scheduler") {
                        for (std::size_t i = 0; i < n; ++i) sched.spawn(nullptr, [&out, i] { out[i] = 1; });
                        sched.wait_all();
                    } else {
                        oneapi::tbb::task_group g;
                        for (std::size_t i = 0; i < n; ++i) g.run([&out, i] { out[i] = 2; });
                        g.wait();
                    }
                    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                });
                if (json)
                    std::printf("{\"kind\":\"%s\",\"threads\":%d,\"tasks\":%zu,\"seconds\":%.6f,\"per_task_us\":%.4f,\"run\":%zu}\n",
                                kind, threads, n, s, s / n * 1e6, r);
                else
                    std::printf("%-10s %d threads  %8.4f us/task\n", kind, threads, s / n * 1e6);
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-bench-spawn-floor: %s\n", e.what());
        return 2;
    }
}
