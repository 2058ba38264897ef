// rampart-kmeans: k-means over generated points with shrinking recovery.
// Under rampart-run/mpiexec the points go to the replicated store once; ranks
// that die are not replaced: the survivors load their points from the store
// and go on, and the result is the same, bit for bit, as without failures.

#include "kmeans.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include "../common/options.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

namespace km = rampart::kmeans;

struct options {
    km::config c;
    int threads = 0;
    bool json = false;
};

using rampart::apps::positive;

void add_options(CLI::App& app, options& o) {
    app.add_option("--points", o.c.points, "points in all")->check(positive);
    app.add_option("--dims", o.c.dims, "coordinates per point")->check(positive);
    app.add_option("--clusters", o.c.clusters, "clusters")->check(positive);
    app.add_option("--iterations", o.c.iterations, "iterations");
    app.add_option("--chunk-points", o.c.chunk_points, "points per chunk (the unit of work)")->check(positive);
    app.add_option("--seed", o.c.seed, "seed of the points");
    app.add_option("--replicas", o.c.replicas, "copies of each point in the store (0: the store's default)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--threads", o.threads, "worker threads (0: RAMPART_THREADS or every core)")
        ->check(CLI::Range(0, 4096));
    app.add_flag("--verify", o.c.verify,
                 "check reloaded points against the generator and compare the result with a run in one process");
    app.add_flag("--json", o.json, "end the output with one JSON object");
}

/// The largest difference between two sets of centers, relative to the larger magnitude.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double scale = std::max(std::fabs(a[i]), std::fabs(b[i]));
        if (scale > 0) worst = std::max(worst, std::fabs(a[i] - b[i]) / scale);
    }
    return worst;
}

void print_text(const km::config& c, const km::result& r, int threads) {
    std::printf("kmeans         %llu points x %zu dims, %zu clusters, %zu iterations, %llu chunks of %llu points\n",
                static_cast<unsigned long long>(c.points), c.dims, c.clusters, c.iterations,
                static_cast<unsigned long long>(r.chunks), static_cast<unsigned long long>(r.chunk_points));
    if (c.distributed)
        std::printf("ranks          %d x %d threads, store with %d copies of each point\n", r.ranks, threads,
                    r.replicas);
    else
        std::printf("ranks          one process (not under mpiexec) x %d threads, no store\n", threads);
    std::printf("lost ranks     %s (%llu recoveries here, %.1f ms), %llu points reloaded from the store\n",
                r.lost_ranks.empty() ? "none" : nlohmann::json(r.lost_ranks).dump().c_str(),
                static_cast<unsigned long long>(r.recoveries), 1e3 * r.recovery_seconds,
                static_cast<unsigned long long>(r.points_reloaded));
    std::printf("time           %.3f s (submit %.3f s)\n", r.seconds, r.submit_seconds);
    std::printf("assignments    %s\n", r.assignments.c_str());
    std::printf("centers        %s\n", r.centers_hash.c_str());
    std::printf("checksum       %s\n", r.checksum.c_str());
}

// The same computation in one process: same assignments, centers equal to
// within rounding (sums in another order).
bool verify_against_one_process(rampart::runtime& rt, const km::config& c, const km::result& r) {
    km::config one = c;
    one.distributed = false;
    const km::result ref = rt.run([&] { return km::run(one); });
    const double diff = relative_difference(r.centers, ref.centers);
    const bool same = ref.assignments == r.assignments && diff <= 1e-9;
    std::printf("verify         %s as one process (centers %s, largest relative difference %.3g)\n",
                same ? "same assignments" : "DIFFERENT assignments or centers",
                ref.centers_hash == r.centers_hash ? "bit-identical" : "not bit-identical", diff);
    return same;
}

nlohmann::ordered_json to_json(const km::config& c, const km::result& r, int threads) {
    return {{"program", "kmeans"},
            {"checksum", r.checksum},
            {"assignments", r.assignments},
            {"centers_hash", r.centers_hash},
            {"ranks", r.ranks},
            {"threads", threads},
            {"points", c.points},
            {"dims", c.dims},
            {"clusters", c.clusters},
            {"iterations", c.iterations},
            {"chunk_points", r.chunk_points},
            {"chunks", r.chunks},
            {"seed", c.seed},
            {"replicas", r.replicas},
            {"lost_ranks", r.lost_ranks},
            {"recoveries", r.recoveries},
            {"points_reloaded", r.points_reloaded},
            {"seconds", r.seconds},
            {"submit_seconds", r.submit_seconds},
            {"recovery_seconds", r.recovery_seconds},
            {"centers", r.centers}};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "k-means over generated points. Under rampart-run (any number of ranks, no spares needed) the "
        "points are submitted to the replicated store; when ranks die (rampart-run --kill R@iterK) the "
        "survivors load their points and go on."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options o;
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    try {
        km::validate(o.c);  // before MPI starts: bad input fails at once, on every rank alike
        o.c.distributed = rampart::comm::distributed();
        rampart::runtime rt(o.threads);
        const km::result r = rt.run([&] { return km::run(o.c); });
        if (!r.reporter) return 0;  // the lowest living rank reports for all
        print_text(o.c, r, rt.threads());
        const bool verified = !(o.c.verify && o.c.distributed) || verify_against_one_process(rt, o.c, r);
        if (o.json) std::printf("%s\n", to_json(o.c, r, rt.threads()).dump().c_str());
        return verified ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-kmeans: %s\n", e.what());
        return 2;
    }
}
