// rampart-bench-tasks: the artificial workload of the HPX resiliency paper.
// N tasks each busy-wait a grain of g microseconds and fail (throw) with
// probability e; they are launched in a loop with plain async or a resilient
// variant, and the time until all are done is divided by N.

#include "../../apps/common/cli.hpp"

#include <rampart/rampart.hpp>

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
            while (clock_type::now() - start < grain) {
            }
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

}  // namespace

int main(int argc, char** argv) {
    try {
        rampart::cli::options opt(argc, argv, {"json", "help"});
        if (opt.flag("help")) {
            std::puts(
                "usage: rampart-bench-tasks [--tasks 1000000] [--grain-us 0] [--error-rate 0]\n"
                "         [--threads 1] [--variant all|async|async_replay|...] [--repeat 1] [--seed 1] [--json]");
            return 0;
        }
        const std::size_t n = opt.get_uint("tasks", 1000000);
        const double grain_us = opt.get_double("grain-us", 0);
        const double error_rate = opt.get_double("error-rate", 0);
        const int threads = static_cast<int>(opt.get_uint("threads", 1));
        const std::string which = opt.get("variant", "all");
        const std::size_t repeat = opt.get_uint("repeat", 1);
        const std::uint64_t seed = opt.get_uint("seed", 1);
        const bool json = opt.flag("json");
        opt.finish();
        if (threads < 1) throw rampart::invalid_argument("--threads must be at least 1");

        std::vector<std::string> variants = {"async",
                                             "async_replay",
                                             "async_replay_validate",
                                             "async_replicate",
                                             "async_replicate_validate",
                                             "async_replicate_vote",
                                             "async_replicate_vote_validate"};
        if (which != "all") variants = {which};

        rampart::runtime rt(threads);
        rampart::fault_injector inject(error_rate, seed);
        workload w{std::chrono::nanoseconds(static_cast<long long>(grain_us * 1000)), &inject};
        for (std::size_t r = 0; r < repeat; ++r) {
            for (const auto& v : variants) {
                rampart::reset_counters();
                double s = rt.run([&] { return run_variant(v, n, w); });
                auto c = rampart::read_counters();
                if (json)
                    std::printf(
                        "{\"variant\":\"%s\",\"threads\":%d,\"grain_us\":%g,\"error_rate\":%g,\"tasks\":%zu,"
                        "\"seconds\":%.6f,\"per_task_us\":%.4f,\"replays\":%llu,\"exhausted\":%llu,\"run\":%zu}\n",
                        v.c_str(), threads, grain_us, error_rate, n, s, s / n * 1e6,
                        static_cast<unsigned long long>(c.replays), static_cast<unsigned long long>(c.exhausted), r);
                else
                    std::printf("%-30s %2d threads  grain %6g us  errors %5g  %9zu tasks  %8.4f s  %8.4f us/task\n",
                                v.c_str(), threads, grain_us, error_rate, n, s, s / n * 1e6);
                std::fflush(stdout);
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-bench-tasks: %s\n", e.what());
        return 2;
    }
}
