// rampart-bench-tasks: the artificial workload of the HPX resiliency paper.
// N tasks each busy-wait a grain of g microseconds and fail (throw) with
// probability e; they are launched in a loop with plain async or a resilient
// variant, and the time until all are done is divided by N.

#include <rampart/rampart.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct workload {
    std::chrono::nanoseconds grain;
    rampart::fault_injector* inject;
    int operator()(std::uint64_t i) const {
        const bool fail = inject->hits(i);
        if (grain.count() > 0) {
            const auto start = clock_type::now();
            while (clock_type::now() - start < grain) {}
        }
        if (fail) inject->maybe_throw(i);
        return 42;
    }
};

constexpr std::size_t replay_attempts = 10;
constexpr std::size_t replicas = 3;

double run_variant(const std::string& v, std::size_t n, const workload& w) {
    auto valid = [](int r) { return r == 42; };
    std::vector<rampart::future<int>> futures;
    futures.reserve(n);
    const auto t0 = clock_type::now();
    for (std::uint64_t i = 0; i < n; ++i) {
        if (v == "async")
            futures.push_back(rampart::async(w, i));
        else if (v == "async_replay")
            futures.push_back(rampart::async_replay(replay_attempts, w, i));
        else if (v == "async_replay_validate")
            futures.push_back(rampart::async_replay_validate(replay_attempts, valid, w, i));
        else if (v == "async_replicate")
            futures.push_back(rampart::async_replicate(replicas, w, i));
        else if (v == "async_replicate_validate")
            futures.push_back(rampart::async_replicate_validate(replicas, valid, w, i));
        else if (v == "async_replicate_vote")
            futures.push_back(rampart::async_replicate_vote(replicas, rampart::majority_vote{}, w, i));
        else if (v == "async_replicate_vote_validate")
            futures.push_back(rampart::async_replicate_vote_validate(replicas, rampart::majority_vote{}, valid, w, i));
        else
            throw rampart::invalid_argument("unknown variant '" + v + "'");
    }
    // As HPX's benchmark: wait for every future (failed ones hold their
    // exception and still count as done).
    rampart::wait_all(futures);
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct options {
    std::size_t tasks = 1000000;
    double grain_us = 0;
    double error_rate = 0;
    int threads = 1;
    std::string variant = "all";
    std::size_t repeat = 1;
    std::uint64_t seed = 1;
    bool json = false;
};

const std::vector<std::string> all_variants = {"async",
                                               "async_replay",
                                               "async_replay_validate",
                                               "async_replicate",
                                               "async_replicate_validate",
                                               "async_replicate_vote",
                                               "async_replicate_vote_validate"};

void add_options(CLI::App& app, options& o) {
    std::vector<std::string> choices = all_variants;
    choices.push_back("all");
    app.add_option("--tasks", o.tasks, "tasks per run")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));
    app.add_option("--grain-us", o.grain_us, "busy time of each task")->check(CLI::Range(0.0, 1e9));
    app.add_option("--error-rate", o.error_rate, "probability that a task throws")->check(CLI::Range(0.0, 1.0));
    app.add_option("--threads", o.threads, "worker threads")->check(CLI::Range(1, 4096));
    app.add_option("--variant", o.variant, "which launch, or all")->check(CLI::IsMember(choices));
    app.add_option("--repeat", o.repeat, "runs of each variant");
    app.add_option("--seed", o.seed, "seed of the failures");
    app.add_flag("--json", o.json, "one JSON object per run");
}

void report(const options& o, const std::string& v, double s, const rampart::counters& c, std::size_t run) {
    const double per_task_us = s / static_cast<double>(o.tasks) * 1e6;
    if (o.json)
        std::printf("%s\n", nlohmann::ordered_json{{"variant", v},
                                                   {"threads", o.threads},
                                                   {"grain_us", o.grain_us},
                                                   {"error_rate", o.error_rate},
                                                   {"tasks", o.tasks},
                                                   {"seconds", s},
                                                   {"per_task_us", per_task_us},
                                                   {"replays", c.replays},
                                                   {"exhausted", c.exhausted},
                                                   {"run", run}}
                                .dump()
                                .c_str());
    else
        std::printf("%-30s %2d threads  grain %6g us  errors %5g  %9zu tasks  %8.4f s  %8.4f us/task\n", v.c_str(),
                    o.threads, o.grain_us, o.error_rate, o.tasks, s, per_task_us);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "The artificial workload of the HPX resiliency paper: tasks that busy-wait a grain and fail with "
        "a given probability, launched with plain async or a resilient variant."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options o;
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    try {
        const std::vector<std::string> variants = o.variant == "all" ? all_variants : std::vector{o.variant};
        rampart::runtime rt(o.threads);
        rampart::fault_injector inject(o.error_rate, o.seed);
        workload w{std::chrono::nanoseconds(static_cast<long long>(o.grain_us * 1000)), &inject};
        for (std::size_t r = 0; r < o.repeat; ++r)
            for (const auto& v : variants) {
                rampart::reset_counters();
                const double s = rt.run([&] { return run_variant(v, o.tasks, w); });
                report(o, v, s, rampart::read_counters(), r);
            }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-bench-tasks: %s\n", e.what());
        return 2;
    }
}
