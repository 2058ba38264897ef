// rampart-smith-waterman: local alignment of two generated sequences on a
// wavefront of tiles, as baseline dataflow, replay or replicate(3) with vote,
// with injected faults; distributed over the ranks under mpiexec/rampart-run.

#include "../common/cli.hpp"
#include "smith_waterman.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace {

void usage() {
    std::puts(
        "usage: rampart-smith-waterman [--variant baseline|replay|replicate] [--length-a 16384]\n"
        "         [--length-b 16384] [--tile 256] [--input-seed 1] [--threads N] [--error-rate 0]\n"
        "         [--seed 1] [--replays 5] [--checkpoint-every ROWS] [--verify] [--json]\n"
        "Faults: replay gets tasks that throw; the other variants get one flipped bit\n"
        "in a tile's output at the given rate per task attempt. --verify also scores\n"
        "the whole matrix without tiles and compares the best cell.");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        rampart::cli::options opt(argc, argv, {"json", "help", "verify"});
        if (opt.flag("help")) {
            usage();
            return 0;
        }
        namespace sw = rampart::smith_waterman;
        sw::config c;
        c.kind = sw::parse_variant(opt.get("variant", "baseline"));
        c.length_a = opt.get_uint("length-a", c.length_a);
        c.length_b = opt.get_uint("length-b", c.length_b);
        c.tile = opt.get_uint("tile", c.tile);
        c.error_rate = opt.get_double("error-rate", 0.0);
        c.seed = opt.get_uint("seed", c.seed);
        c.input_seed = opt.get_uint("input-seed", c.input_seed);
        c.replays = opt.get_uint("replays", c.replays);
        c.checkpoint_every = opt.get_uint("checkpoint-every", 0);
        const int threads = static_cast<int>(opt.get_uint("threads", 0));
        const bool json = opt.flag("json");
        const bool verify = opt.flag("verify");
        opt.finish();
        c.distributed = rampart::comm::distributed();

        rampart::runtime rt(threads);
        auto r = rt.run([&] { return sw::run(c); });
        if (c.distributed && rampart::comm::rank() != 0) return 0;  // rank 0 reports for all
        const int ranks = c.distributed ? rampart::comm::size() : 1;
        std::printf("variant        %s (%zu x %zu cells, tiles of %zu, %d ranks x %d threads)\n", to_string(c.kind).c_str(),
                    c.length_a, c.length_b, c.tile, ranks, rt.threads());
        std::printf("faults         %llu injected (%s, rate %g, seed %llu)\n",
                    static_cast<unsigned long long>(r.faults_injected), sw::fault_kind(c.kind).c_str(), c.error_rate,
                    static_cast<unsigned long long>(c.seed));
        std::printf("handled        %llu replays, %llu votes lost, %llu exhausted\n",
                    static_cast<unsigned long long>(r.stats.replays), static_cast<unsigned long long>(r.stats.votes_lost),
                    static_cast<unsigned long long>(r.stats.exhausted));
        std::printf("time           %.3f s\n", r.seconds);
        std::printf("best           %d at (%u, %u)\n", r.end.score, r.end.row, r.end.col);
        std::printf("checksum       %s\n", r.checksum.c_str());
        bool verified = true;
        if (verify) {
            const auto whole = sw::score_whole(sw::make_sequence(c.length_a, c.input_seed),
                                               sw::make_sequence(c.length_b, c.input_seed + 1));
            verified = whole.score == r.end.score && whole.row == r.end.row && whole.col == r.end.col;
            std::printf("verify         %s (untiled: %d at (%u, %u))\n", verified ? "same best cell" : "DIFFERENT",
                        whole.score, whole.row, whole.col);
        }
        if (json)
            std::printf(
                "{\"variant\":\"%s\",\"checksum\":\"%s\",\"score\":%d,\"row\":%u,\"col\":%u,\"seconds\":%.6f,"
                "\"faults_injected\":%llu,\"fault_kind\":\"%s\",\"error_rate\":%g,\"seed\":%llu,\"replays\":%llu,"
                "\"votes_lost\":%llu,\"exhausted\":%llu,\"tasks\":%llu,\"length_a\":%zu,\"length_b\":%zu,\"tile\":%zu,"
                "\"threads\":%d,\"ranks\":%d}\n",
                to_string(c.kind).c_str(), r.checksum.c_str(), r.end.score, r.end.row, r.end.col, r.seconds,
                static_cast<unsigned long long>(r.faults_injected), sw::fault_kind(c.kind).c_str(), c.error_rate,
                static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(r.stats.replays),
                static_cast<unsigned long long>(r.stats.votes_lost), static_cast<unsigned long long>(r.stats.exhausted),
                static_cast<unsigned long long>(r.stats.tasks), c.length_a, c.length_b, c.tile, rt.threads(), ranks);
        return verified ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-smith-waterman: %s\n", e.what());
        return 2;
    }
}
