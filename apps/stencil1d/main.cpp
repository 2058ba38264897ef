// rampart-stencil1d: the 1D stencil with plain dataflow, replay, replay with
// checksum validation or replicate(3) with vote, and injected faults.

#include "../common/cli.hpp"
#include "stencil.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <cstdlib>

#include <cstdio>
#include <exception>

namespace {

void usage() {
    std::puts(
        "usage: rampart-stencil1d [--variant dataflow|replay|replay_checksum|replicate_vote]\n"
        "         [--subdomains 128] [--points 2000] [--iterations 1000] [--steps 16]\n"
        "         [--threads N] [--error-rate 0] [--seed 1] [--replays 5] [--checkpoint-every K] [--json]\n"
        "Faults: replay gets tasks that throw; the other variants get one flipped\n"
        "bit in a task's output at the given rate per task attempt.");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        rampart::cli::options opt(argc, argv, {"json", "help"});
        if (opt.flag("help")) {
            usage();
            return 0;
        }
        rampart::stencil::config c;
        c.kind = rampart::stencil::parse_variant(opt.get("variant", "dataflow"));
        c.subdomains = opt.get_uint("subdomains", c.subdomains);
        c.points = opt.get_uint("points", c.points);
        c.iterations = opt.get_uint("iterations", c.iterations);
        c.steps = opt.get_uint("steps", c.steps);
        c.error_rate = opt.get_double("error-rate", 0.0);
        c.seed = opt.get_uint("seed", c.seed);
        c.replays = opt.get_uint("replays", c.replays);
        c.checkpoint_every = opt.get_uint("checkpoint-every", 0);
        const int threads = static_cast<int>(opt.get_uint("threads", 0));
        const bool json = opt.flag("json");
        opt.finish();

        // Under mpiexec the domain is spread over the ranks.
        c.distributed = rampart::comm::distributed();

        rampart::runtime rt(threads);
        auto r = rt.run([&] { return rampart::stencil::run(c); });
        if (c.distributed && rampart::comm::rank() != 0) return 0;  // rank 0 reports for all
        const auto& s = r.stats;
        const int ranks = c.distributed ? rampart::comm::size() : 1;
        std::printf("variant        %s (%zu subdomains x %zu points, %zu iterations x %zu steps, %d ranks x %d threads)\n",
                    to_string(c.kind).c_str(), c.subdomains, c.points, c.iterations, c.steps, ranks, rt.threads());
        std::printf("faults         %llu injected (%s, rate %g, seed %llu)\n",
                    static_cast<unsigned long long>(r.faults_injected), fault_kind(c.kind).c_str(), c.error_rate,
                    static_cast<unsigned long long>(c.seed));
        std::printf("handled        %llu replays, %llu votes lost, %llu validations failed, %llu exhausted\n",
                    static_cast<unsigned long long>(s.replays), static_cast<unsigned long long>(s.votes_lost),
                    static_cast<unsigned long long>(s.validations_failed),
                    static_cast<unsigned long long>(s.exhausted));
        std::printf("time           %.3f s\n", r.seconds);
        if (c.distributed)
            std::printf("communication  %.2f%% of the CPU time (engine threads %.3f s of %.3f s)\n",
                        100.0 * r.comm_cpu_seconds / r.cpu_seconds, r.comm_cpu_seconds, r.cpu_seconds);
        std::printf("checksum       %s\n", r.checksum.c_str());
        if (json)
            std::printf(
                "{\"variant\":\"%s\",\"checksum\":\"%s\",\"seconds\":%.6f,\"faults_injected\":%llu,"
                "\"fault_kind\":\"%s\",\"error_rate\":%g,\"seed\":%llu,\"replays\":%llu,\"votes_lost\":%llu,"
                "\"corrections\":%llu,\"validations_failed\":%llu,\"exhausted\":%llu,\"tasks\":%llu,"
                "\"subdomains\":%zu,\"points\":%zu,\"iterations\":%zu,\"steps\":%zu,\"threads\":%d,\"ranks\":%d,\"cpu_seconds\":%.6f,\"comm_cpu_seconds\":%.6f}\n",
                to_string(c.kind).c_str(), r.checksum.c_str(), r.seconds,
                static_cast<unsigned long long>(r.faults_injected), fault_kind(c.kind).c_str(), c.error_rate,
                static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(s.replays),
                static_cast<unsigned long long>(s.votes_lost), static_cast<unsigned long long>(s.corrections_applied),
                static_cast<unsigned long long>(s.validations_failed), static_cast<unsigned long long>(s.exhausted),
                static_cast<unsigned long long>(s.tasks), c.subdomains, c.points, c.iterations, c.steps,
                rt.threads(), ranks, r.cpu_seconds, r.comm_cpu_seconds);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-stencil1d: %s\n", e.what());
        return 2;
    }
}
