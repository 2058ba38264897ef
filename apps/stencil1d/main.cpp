// rampart-stencil1d: the 1D stencil with plain dataflow, replay, replay with
// checksum validation or replicate(3) with vote, and injected faults.

#include "stencil.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include "../common/options.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

namespace {

namespace st = rampart::stencil;

struct options {
    st::config c;
    std::string variant = "dataflow";
    int threads = 0;
    bool json = false;
};

using rampart::apps::positive;

void add_options(CLI::App& app, options& o) {
    app.add_option("--variant", o.variant, "how tasks are protected")
        ->check(CLI::IsMember({"dataflow", "replay", "replay_checksum", "replicate_vote"}));
    app.add_option("--subdomains", o.c.subdomains, "subdomains (tasks per iteration)")->check(positive);
    app.add_option("--points", o.c.points, "points per subdomain")->check(positive);
    app.add_option("--iterations", o.c.iterations, "iterations")->check(CLI::Range(0, 4096));
    app.add_option("--steps", o.c.steps, "time steps per task")->check(positive);
    rampart::apps::add_task_options(app, o.threads, o.c.error_rate, o.c.seed, o.c.replays);
    app.add_option("--checkpoint-every", o.c.checkpoint_every, "iterations between checkpoints (0: none)");
    app.add_flag("--json", o.json, "end the output with one JSON object");
}

void print_text(const options& o, const st::result& r, int ranks, int threads) {
    const auto& c = o.c;
    const auto& s = r.stats;
    std::printf("variant        %s (%zu subdomains x %zu points, %zu iterations x %zu steps, %d ranks x %d threads)\n",
                to_string(c.kind).c_str(), c.subdomains, c.points, c.iterations, c.steps, ranks, threads);
    std::printf("faults         %llu injected (%s, rate %g, seed %llu)\n",
                static_cast<unsigned long long>(r.faults_injected), fault_kind(c.kind).c_str(), c.error_rate,
                static_cast<unsigned long long>(c.seed));
    std::printf("handled        %llu replays, %llu votes lost, %llu validations failed, %llu exhausted\n",
                static_cast<unsigned long long>(s.replays), static_cast<unsigned long long>(s.votes_lost),
                static_cast<unsigned long long>(s.validations_failed), static_cast<unsigned long long>(s.exhausted));
    std::printf("time           %.3f s\n", r.seconds);
    if (c.distributed)
        std::printf("communication  %.2f%% of the CPU time (engine threads %.3f s of %.3f s)\n",
                    100.0 * r.comm_cpu_seconds / r.cpu_seconds, r.comm_cpu_seconds, r.cpu_seconds);
    std::printf("checksum       %s\n", r.checksum.c_str());
}

nlohmann::ordered_json to_json(const options& o, const st::result& r, int ranks, int threads) {
    const auto& c = o.c;
    const auto& s = r.stats;
    return {{"variant", to_string(c.kind)},
            {"checksum", r.checksum},
            {"seconds", r.seconds},
            {"faults_injected", r.faults_injected},
            {"fault_kind", fault_kind(c.kind)},
            {"error_rate", c.error_rate},
            {"seed", c.seed},
            {"replays", s.replays},
            {"votes_lost", s.votes_lost},
            {"corrections", s.corrections_applied},
            {"validations_failed", s.validations_failed},
            {"exhausted", s.exhausted},
            {"tasks", s.tasks},
            {"subdomains", c.subdomains},
            {"points", c.points},
            {"iterations", c.iterations},
            {"steps", c.steps},
            {"threads", threads},
            {"ranks", ranks},
            {"cpu_seconds", r.cpu_seconds},
            {"comm_cpu_seconds", r.comm_cpu_seconds}};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "The 1D stencil of the HPX and HClib papers, with resilient tasks and injected faults. Faults: "
        "replay gets tasks that throw; the other variants get one flipped bit in a task's output at the "
        "given rate per task attempt."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options o;
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    try {
        o.c.kind = st::parse_variant(o.variant);
        o.c.distributed = rampart::comm::distributed();  // under mpiexec the domain is spread over the ranks
        rampart::runtime rt(o.threads);
        const auto r = rt.run([&] { return st::run(o.c); });
        if (o.c.distributed && rampart::comm::rank() != 0) return 0;  // rank 0 reports for all
        const int ranks = o.c.distributed ? rampart::comm::size() : 1;
        print_text(o, r, ranks, rt.threads());
        if (o.json) std::printf("%s\n", to_json(o, r, ranks, rt.threads()).dump().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-stencil1d: %s\n", e.what());
        return 2;
    }
}
