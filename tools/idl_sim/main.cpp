// rampart-idl-sim: fails random PEs of the store's real placement until some
// block has no copy left, and compares the mean number of failures with the
// restore paper's IV-D model (its Fig. 3). One row, or with --json one JSON
// object per line, per (p, r).
//
//     rampart-idl-sim --pes 64,1024,16384 --replicas 2,4 --trials 2000 --json

#include <rampart/store/data_loss_simulation.hpp>
#include <rampart/store/placement.hpp>

#include "../../apps/common/cli.hpp"

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* const usage =
    "usage: rampart-idl-sim [options]\n"
    "  --pes LIST          PE counts, comma separated (default 96,192,384,768,1536,3072,6144,12288:\n"
    "                      divisible by 2, 3 and 4)\n"
    "  --replicas LIST     copies per block, comma separated (default 2,3,4)\n"
    "  --blocks N          blocks in the store (default 1024 per PE)\n"
    "  --range-blocks N    blocks per permutation range, 0 for no permutation (default 64)\n"
    "  --trials N          simulated failure sequences per (p, r) (default 10000: the standard\n"
    "                      error of the mean is then ~0.5% at r = 2, less at larger r)\n"
    "  --seed S            seeds the placement's permutation and the failures (default 1)\n"
    "  --no-model          allow r not dividing p: simulate only, no model\n"
    "  --json              one JSON object per line per (p, r)\n";

struct usage_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

std::vector<int> parse_list(const std::string& name, const std::string& text) {
    std::vector<int> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        char* end = nullptr;
        const long long v = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 1 || v > INT_MAX)
            throw usage_error("--" + name + " expects positive integers separated by commas, got '" + text + "'");
        out.push_back(static_cast<int>(v));
    }
    if (out.empty() || text.back() == ',') throw usage_error("--" + name + ": '" + text + "' is not a list");
    return out;
}

// Each (p, r) gets its own failure sequence, so a row can be reproduced alone.
std::uint64_t row_seed(std::uint64_t seed, int p, int r) {
    std::uint64_t x = seed ^ (static_cast<std::uint64_t>(p) << 20) ^ static_cast<std::uint64_t>(r);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    namespace store = rampart::store;
    std::vector<int> pes, replicas;
    std::optional<std::uint64_t> blocks_option;
    std::uint64_t range_blocks = 64, seed = 1, trials = 10000;
    bool json = false, with_model = true;
    try {
        rampart::cli::options opt(argc, argv, {"json", "no-model", "help"});
        if (opt.flag("help")) {
            std::fputs(usage, stdout);
            return 0;
        }
        pes = parse_list("pes", opt.get("pes", "96,192,384,768,1536,3072,6144,12288"));
        replicas = parse_list("replicas", opt.get("replicas", "2,3,4"));
        if (!opt.get("blocks", "").empty()) {
            blocks_option = opt.get_uint("blocks", 0);
            if (*blocks_option == 0) throw usage_error("--blocks 0: the store needs at least one block");
        }
        range_blocks = opt.get_uint("range-blocks", range_blocks);
        trials = opt.get_uint("trials", trials);
        seed = opt.get_uint("seed", seed);
        json = opt.flag("json");
        with_model = !opt.flag("no-model");
        opt.finish();
        if (trials < 1 || trials > INT_MAX) throw usage_error("--trials must be in [1, " + std::to_string(INT_MAX) + "]");
        for (int p : pes)
            for (int r : replicas) {
                if (r > p)
                    throw usage_error(std::to_string(r) + " copies on " + std::to_string(p) +
                                      " PEs: every copy of a block needs its own PE (r <= p)");
                if (with_model && p % r != 0)
                    throw usage_error("r = " + std::to_string(r) + " does not divide p = " + std::to_string(p) +
                                      ": the model assumes p/r groups of r PEs (use --no-model to simulate anyway)");
            }
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "rampart-idl-sim: %s\n%s", e.what(), usage);
        return 2;
    }

    if (!json)
        std::printf("%7s %2s %10s %6s %6s %6s | %9s %7s %6s %6s %6s | %9s %6s %6s %6s | %7s %6s\n", "p", "r", "blocks",
                    "range", "trials", "sets", "sim mean", "+-se", "p10", "median", "p90", "model", "p10", "median",
                    "p90", "rel.diff", "sec");
    try {
        for (int p : pes)
            for (int r : replicas) {
                const auto start = std::chrono::steady_clock::now();
                const std::uint64_t blocks = blocks_option ? *blocks_option : 1024ULL * static_cast<std::uint64_t>(p);
                const store::placement where(blocks, p, r, range_blocks, seed);
                store::loss_simulator simulator(where);
                const std::size_t sets = simulator.holder_sets();
                const auto sim = store::summarize_failures(
                    store::simulate_failures_until_loss(simulator, static_cast<int>(trials), row_seed(seed, p, r)));
                std::optional<store::loss_statistics> model;
                if (with_model && p % r == 0) {
                    model = store::model_failures_until_loss(p, r);
                    if (sets != static_cast<std::size_t>(p / r))
                        std::fprintf(stderr,
                                     "rampart-idl-sim: p = %d, r = %d: only %zu of the %d groups hold data (too few "
                                     "blocks or ranges); the model assumes all do\n",
                                     p, r, sets, p / r);
                }
                const double seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                const double diff = model ? (sim.mean - model->mean) / model->mean : 0;
                if (json) {
                    std::string line = "{\"pes\": " + std::to_string(p) + ", \"replicas\": " + std::to_string(r) +
                                       ", \"blocks\": " + std::to_string(blocks) +
                                       ", \"range_blocks\": " + std::to_string(range_blocks) +
                                       ", \"seed\": " + std::to_string(seed) + ", \"trials\": " + std::to_string(trials) +
                                       ", \"holder_sets\": " + std::to_string(sets) +
                                       ", \"mean_failures_until_loss\": " + number(sim.mean) +
                                       ", \"standard_error\": " + number(sim.standard_error) +
                                       ", \"p10\": " + std::to_string(sim.p10) +
                                       ", \"median\": " + std::to_string(sim.median) +
                                       ", \"p90\": " + std::to_string(sim.p90) +
                                       ", \"mean_fraction_failed\": " + number(sim.mean / p);
                    if (model)
                        line += ", \"model_mean_failures_until_loss\": " + number(model->mean) +
                                ", \"model_p10\": " + std::to_string(model->p10) +
                                ", \"model_median\": " + std::to_string(model->median) +
                                ", \"model_p90\": " + std::to_string(model->p90) +
                                ", \"model_mean_fraction_failed\": " + number(model->mean / p) +
                                ", \"relative_difference\": " + number(diff);
                    else
                        line += ", \"model_mean_failures_until_loss\": null, \"relative_difference\": null";
                    line += ", \"seconds\": " + number(seconds) + "}";
                    std::puts(line.c_str());
                } else if (model) {
                    std::printf("%7d %2d %10llu %6llu %6llu %6zu | %9.2f %7.2f %6d %6d %6d | %9.2f %6d %6d %6d | %+6.2f%% %6.2f\n",
                                p, r, static_cast<unsigned long long>(blocks),
                                static_cast<unsigned long long>(range_blocks), static_cast<unsigned long long>(trials),
                                sets, sim.mean, sim.standard_error, sim.p10, sim.median, sim.p90, model->mean,
                                model->p10, model->median, model->p90, 100 * diff, seconds);
                } else {
                    std::printf("%7d %2d %10llu %6llu %6llu %6zu | %9.2f %7.2f %6d %6d %6d | %9s %6s %6s %6s | %7s %6.2f\n",
                                p, r, static_cast<unsigned long long>(blocks),
                                static_cast<unsigned long long>(range_blocks), static_cast<unsigned long long>(trials),
                                sets, sim.mean, sim.standard_error, sim.p10, sim.median, sim.p90, "-", "-", "-", "-",
                                "-", seconds);
                }
                std::fflush(stdout);
            }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-idl-sim: %s\n", e.what());
        return 1;
    }
    return 0;
}
