// rampart-bench-spawn-floor: what spawning N empty tasks in a loop costs,
// to tell rampart's own cost from oneTBB's:
//   "finish_async" rampart::async inside rampart::finish, futures dropped:
//                  the cheapest way a program spawns tasks through rampart
//   "task_group"   oneTBB's own tbb::task_group::run + wait
// Prints one JSON object per line with --json.

#include <rampart/rampart.hpp>

#include <oneapi/tbb/task_group.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

double spawn(const std::string& kind, std::vector<int>& out) {
    const auto t0 = std::chrono::steady_clock::now();
    if (kind == "finish_async") {
        rampart::finish([&] {
            for (std::size_t i = 0; i < out.size(); ++i) (void)rampart::async([&out, i] { out[i] = 1; });
        });
    } else {
        oneapi::tbb::task_group g;
        for (std::size_t i = 0; i < out.size(); ++i) g.run([&out, i] { out[i] = 2; });
        g.wait();
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"The cost of spawning empty tasks through rampart and through oneTBB's task_group."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    std::size_t n = 1000000, repeat = 3;
    int threads = 1;
    bool json = false;
    app.add_option("--tasks", n, "tasks per run")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));
    app.add_option("--threads", threads, "worker threads")->check(CLI::Range(1, 4096));
    app.add_option("--repeat", repeat, "runs of each kind");
    app.add_flag("--json", json, "one JSON object per run");
    CLI11_PARSE(app, argc, argv);
    rampart::runtime rt(threads);
    std::vector<int> out(n);
    for (std::size_t r = 0; r < repeat; ++r)
        for (const std::string kind : {"finish_async", "task_group"}) {
            const double s = rt.run([&] { return spawn(kind, out); });
            const double per_task_us = s / static_cast<double>(n) * 1e6;
            if (json)
                std::printf("%s\n", nlohmann::ordered_json{{"kind", kind},
                                                           {"threads", threads},
                                                           {"tasks", n},
                                                           {"seconds", s},
                                                           {"per_task_us", per_task_us},
                                                           {"run", r}}
                                        .dump()
                                        .c_str());
            else
                std::printf("%-12s %d threads  %8.4f us/task\n", kind.c_str(), threads, per_task_us);
        }
    return 0;
}
