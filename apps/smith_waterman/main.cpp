// rampart-smith-waterman: local alignment of two generated sequences on a
// wavefront of tiles, as baseline dataflow, replay or replicate(3) with vote,
// with injected faults; distributed over the ranks under mpiexec/rampart-run.

#include "smith_waterman.hpp"

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

namespace sw = rampart::smith_waterman;

struct options {
    sw::config c;
    std::string variant = "baseline";
    int threads = 0;
    bool json = false;
    bool verify = false;
};

using rampart::apps::positive;

void add_options(CLI::App& app, options& o) {
    app.add_option("--variant", o.variant, "how tasks are protected")
        ->check(CLI::IsMember({"baseline", "replay", "replicate"}));
    app.add_option("--length-a", o.c.length_a, "length of the first sequence")->check(positive);
    app.add_option("--length-b", o.c.length_b, "length of the second sequence")->check(positive);
    app.add_option("--tile", o.c.tile, "rows and columns per tile")->check(positive);
    app.add_option("--input-seed", o.c.input_seed, "seed of the sequences");
    rampart::apps::add_task_options(app, o.threads, o.c.error_rate, o.c.seed, o.c.replays);
    app.add_option("--checkpoint-every", o.c.checkpoint_every, "tile rows between checkpoints (0: none)");
    app.add_flag("--verify", o.verify, "also score the whole matrix without tiles and compare the best cell");
    app.add_flag("--json", o.json, "end the output with one JSON object");
}

void print_text(const options& o, const sw::result& r, int ranks, int threads) {
    const auto& c = o.c;
    std::printf("variant        %s (%zu x %zu cells, tiles of %zu, %d ranks x %d threads)\n", to_string(c.kind).c_str(),
                c.length_a, c.length_b, c.tile, ranks, threads);
    std::printf("faults         %llu injected (%s, rate %g, seed %llu)\n",
                static_cast<unsigned long long>(r.faults_injected), sw::fault_kind(c.kind).c_str(), c.error_rate,
                static_cast<unsigned long long>(c.seed));
    std::printf("handled        %llu replays, %llu votes lost, %llu exhausted\n",
                static_cast<unsigned long long>(r.stats.replays), static_cast<unsigned long long>(r.stats.votes_lost),
                static_cast<unsigned long long>(r.stats.exhausted));
    std::printf("time           %.3f s\n", r.seconds);
    std::printf("best           %d at (%u, %u)\n", r.end.score, r.end.row, r.end.col);
    std::printf("checksum       %s\n", r.checksum.c_str());
}

// Scores the whole matrix without tiles: the best cell must be the same.
bool verify(const sw::config& c, const sw::result& r) {
    const auto whole =
        sw::score_whole(sw::make_sequence(c.length_a, c.input_seed), sw::make_sequence(c.length_b, c.input_seed + 1));
    const bool same = whole.score == r.end.score && whole.row == r.end.row && whole.col == r.end.col;
    std::printf("verify         %s (untiled: %d at (%u, %u))\n", same ? "same best cell" : "DIFFERENT", whole.score,
                whole.row, whole.col);
    return same;
}

nlohmann::ordered_json to_json(const options& o, const sw::result& r, int ranks, int threads) {
    const auto& c = o.c;
    return {{"variant", to_string(c.kind)},
            {"checksum", r.checksum},
            {"score", r.end.score},
            {"row", r.end.row},
            {"col", r.end.col},
            {"seconds", r.seconds},
            {"faults_injected", r.faults_injected},
            {"fault_kind", sw::fault_kind(c.kind)},
            {"error_rate", c.error_rate},
            {"seed", c.seed},
            {"replays", r.stats.replays},
            {"votes_lost", r.stats.votes_lost},
            {"exhausted", r.stats.exhausted},
            {"tasks", r.stats.tasks},
            {"length_a", c.length_a},
            {"length_b", c.length_b},
            {"tile", c.tile},
            {"threads", threads},
            {"ranks", ranks}};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Local alignment of two generated sequences on a wavefront of tiles, with resilient tasks and "
        "injected faults. Faults: replay gets tasks that throw; the other variants get one flipped bit in a "
        "tile's output at the given rate per task attempt."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options o;
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    try {
        o.c.kind = sw::parse_variant(o.variant);
        o.c.distributed = rampart::comm::distributed();
        rampart::runtime rt(o.threads);
        const auto r = rt.run([&] { return sw::run(o.c); });
        if (o.c.distributed && rampart::comm::rank() != 0) return 0;  // rank 0 reports for all
        const int ranks = o.c.distributed ? rampart::comm::size() : 1;
        print_text(o, r, ranks, rt.threads());
        const bool verified = !o.verify || verify(o.c, r);
        if (o.json) std::printf("%s\n", to_json(o, r, ranks, rt.threads()).dump().c_str());
        return verified ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-smith-waterman: %s\n", e.what());
        return 2;
    }
}
