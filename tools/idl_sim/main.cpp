// rampart-idl-sim: fails random PEs (or whole nodes of them) of the store's
// real placement until some block has no copy left, and compares the mean
// number of failures with the restore paper's IV-D model (its Fig. 3). One
// row, or with --json one JSON object per line, per (p, r).
//
//     rampart-idl-sim --pes 64,1024,16384 --replicas 2,4 --trials 2000 --json
//     rampart-idl-sim --pes 1024 --replicas 2,4 --pes-per-node 8   # nodes fail whole

#include <rampart/store/data_loss_simulation.hpp>
#include <rampart/store/placement.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace {

struct options {
    std::vector<int> pes = {96, 192, 384, 768, 1536, 3072, 6144, 12288};  // divisible by 2, 3 and 4
    std::vector<int> replicas = {2, 3, 4};
    std::optional<std::uint64_t> blocks;  // default: 1024 per PE
    std::uint64_t range_blocks = 64, seed = 1;
    int trials = 10000;  // the standard error of the mean is then ~0.5% at r = 2, less at larger r
    int pes_per_node = 1;
    bool json = false, no_model = false;
};

void add_options(CLI::App& app, options& o) {
    app.add_option("--pes", o.pes, "PE counts, comma separated")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::Range(1, INT_MAX));
    app.add_option("--replicas", o.replicas, "copies per block, comma separated")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::Range(1, INT_MAX));
    app.add_option("--blocks", o.blocks, "blocks in the store (default 1024 per PE)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
    app.add_option("--range-blocks", o.range_blocks, "blocks per permutation range, 0 for no permutation");
    app.add_option("--trials", o.trials, "simulated failure sequences per (p, r)")->check(CLI::Range(1, INT_MAX));
    app.add_option("--seed", o.seed, "seeds the placement's permutation and the failures");
    app.add_option("--pes-per-node", o.pes_per_node,
                   "whole nodes fail: PEs [k*m, (k+1)*m) are node k, as rampart-run places ranks")
        ->check(CLI::Range(1, INT_MAX));
    app.add_flag("--no-model", o.no_model, "allow r not dividing p: simulate only, no model");
    app.add_flag("--json", o.json, "one JSON object per line per (p, r)");
}

// "" if every (p, r) can be simulated (and modelled), else why not.
std::string check_pairs(const options& o) {
    for (int p : o.pes)
        for (int r : o.replicas) {
            if (r > p)
                return std::to_string(r) + " copies on " + std::to_string(p) +
                       " PEs: every copy of a block needs its own PE (r <= p)";
            if (!o.no_model && p % r != 0)
                return "r = " + std::to_string(r) + " does not divide p = " + std::to_string(p) +
                       ": the model assumes p/r groups of r PEs (use --no-model to simulate anyway)";
            if (!o.no_model && (p / r) % o.pes_per_node != 0)
                return "m = " + std::to_string(o.pes_per_node) + " PEs per node does not divide p/r = " +
                       std::to_string(p / r) + ": the model assumes the copies of a block on r different nodes "
                       "(use --no-model to simulate anyway)";
        }
    return "";
}

// Each (p, r) gets its own failure sequence, so a row can be reproduced alone.
std::uint64_t row_seed(std::uint64_t seed, int p, int r) {
    std::uint64_t x = seed ^ (static_cast<std::uint64_t>(p) << 20) ^ static_cast<std::uint64_t>(r);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct row {
    int p = 0, r = 0, units = 0;  // units: what fails, PEs or nodes
    std::uint64_t blocks = 0;
    std::size_t sets = 0;
    rampart::store::loss_statistics sim;
    std::optional<rampart::store::loss_statistics> model;
    double seconds = 0;
};

row simulate(const options& o, int p, int r) {
    namespace store = rampart::store;
    const auto start = std::chrono::steady_clock::now();
    row w;
    w.p = p;
    w.r = r;
    w.blocks = o.blocks.value_or(1024ULL * static_cast<std::uint64_t>(p));
    const store::placement where(w.blocks, p, r, o.range_blocks, o.seed);
    store::loss_simulator simulator(where, o.pes_per_node);
    w.units = simulator.units();
    w.sets = simulator.holder_sets();
    w.sim = store::summarize_failures(store::simulate_failures_until_loss(simulator, o.trials, row_seed(o.seed, p, r)));
    if (!o.no_model && p % r == 0 && (p / r) % o.pes_per_node == 0) {
        w.model = store::model_node_failures_until_loss(p, r, o.pes_per_node);
        if (w.sets != static_cast<std::size_t>(w.units / r))
            std::fprintf(stderr,
                         "rampart-idl-sim: p = %d, r = %d: only %zu of the %d groups hold data (too few blocks or "
                         "ranges); the model assumes all do\n",
                         p, r, w.sets, w.units / r);
    }
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return w;
}

nlohmann::ordered_json to_json(const options& o, const row& w) {
    nlohmann::ordered_json j = {{"pes", w.p},
                                {"replicas", w.r},
                                {"pes_per_node", o.pes_per_node},
                                {"failing_units", w.units},
                                {"blocks", w.blocks},
                                {"range_blocks", o.range_blocks},
                                {"seed", o.seed},
                                {"trials", o.trials},
                                {"holder_sets", w.sets},
                                {"mean_failures_until_loss", w.sim.mean},
                                {"standard_error", w.sim.standard_error},
                                {"p10", w.sim.p10},
                                {"median", w.sim.median},
                                {"p90", w.sim.p90},
                                {"mean_fraction_failed", w.sim.mean / w.units}};
    if (w.model) {
        j["model_mean_failures_until_loss"] = w.model->mean;
        j["model_p10"] = w.model->p10;
        j["model_median"] = w.model->median;
        j["model_p90"] = w.model->p90;
        j["model_mean_fraction_failed"] = w.model->mean / w.units;
        j["relative_difference"] = (w.sim.mean - w.model->mean) / w.model->mean;
    } else {
        j["model_mean_failures_until_loss"] = nullptr;
        j["relative_difference"] = nullptr;
    }
    j["seconds"] = w.seconds;
    return j;
}

void print_row(const options& o, const row& w) {
    const auto& s = w.sim;
    std::printf("%7d %2d %4d %10llu %6llu %6d %6zu | %9.2f %7.2f %6d %6d %6d | ", w.p, w.r, o.pes_per_node,
                static_cast<unsigned long long>(w.blocks), static_cast<unsigned long long>(o.range_blocks), o.trials,
                w.sets, s.mean, s.standard_error, s.p10, s.median, s.p90);
    if (w.model)
        std::printf("%9.2f %6d %6d %6d | %+6.2f%% %6.2f\n", w.model->mean, w.model->p10, w.model->median, w.model->p90,
                    100 * (s.mean - w.model->mean) / w.model->mean, w.seconds);
    else
        std::printf("%9s %6s %6s %6s | %7s %6.2f\n", "-", "-", "-", "-", "-", w.seconds);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Fails random PEs (or whole nodes) of the store's real placement until some block has no copy left, and "
        "compares the mean number of failures with the model of the restore paper (IV-D)."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options o;
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    if (const std::string why = check_pairs(o); !why.empty()) {
        std::fprintf(stderr, "rampart-idl-sim: %s\n", why.c_str());
        return 2;
    }
    if (!o.json)
        std::printf("%7s %2s %4s %10s %6s %6s %6s | %9s %7s %6s %6s %6s | %9s %6s %6s %6s | %7s %6s\n", "p", "r", "m",
                    "blocks",
                    "range", "trials", "sets", "sim mean", "+-se", "p10", "median", "p90", "model", "p10", "median",
                    "p90", "rel.diff", "sec");
    try {
        for (int p : o.pes)
            for (int r : o.replicas) {
                const row w = simulate(o, p, r);
                if (o.json)
                    std::printf("%s\n", to_json(o, w).dump().c_str());
                else
                    print_row(o, w);
                std::fflush(stdout);
            }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-idl-sim: %s\n", e.what());
        return 1;
    }
    return 0;
}
