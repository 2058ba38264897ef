// rampart-kmeans: k-means over generated points with shrinking recovery.
// Under rampart-run/mpiexec the points go to the replicated store once; ranks
// that die are not replaced: the survivors load their points from the store
// and go on, and the result is the same, bit for bit, as without failures.

#include "../common/cli.hpp"
#include "kmeans.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

void usage() {
    std::puts(
        "usage: rampart-kmeans [--points 65536] [--dims 4] [--clusters 8] [--iterations 20]\n"
        "         [--chunk-points 512] [--seed 1] [--replicas 0] [--threads N] [--verify] [--json]\n"
        "Under rampart-run (any number of ranks, no spares needed) the points are\n"
        "submitted to the replicated store (--replicas copies, 0: the store's default);\n"
        "when ranks die (rampart-run --kill R@iterK) the survivors load their points\n"
        "and go on. --verify checks the reloaded points against the generator and\n"
        "compares the result with a run in one process.");
}

std::string ranks_json(const std::vector<int>& ranks) {
    std::string s = "[";
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(ranks[i]);
    }
    s += ']';
    return s;
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

}  // namespace

int main(int argc, char** argv) {
    try {
        rampart::cli::options opt(argc, argv, {"json", "help", "verify"});
        if (opt.flag("help")) {
            usage();
            return 0;
        }
        namespace km = rampart::kmeans;
        km::config c;
        c.points = opt.get_uint("points", c.points);
        c.dims = opt.get_uint("dims", c.dims);
        c.clusters = opt.get_uint("clusters", c.clusters);
        c.iterations = opt.get_uint("iterations", c.iterations);
        c.chunk_points = opt.get_uint("chunk-points", c.chunk_points);
        c.seed = opt.get_uint("seed", c.seed);
        const std::uint64_t replicas = opt.get_uint("replicas", 0);
        if (replicas > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
            throw std::invalid_argument("--replicas " + std::to_string(replicas) + " is too large");
        c.replicas = static_cast<int>(replicas);
        const int threads = static_cast<int>(opt.get_uint("threads", 0));
        const bool json = opt.flag("json");
        c.verify = opt.flag("verify");
        opt.finish();
        km::validate(c);  // before MPI starts: bad input fails at once, on every rank alike
        c.distributed = rampart::comm::distributed();

        rampart::runtime rt(threads);
        const km::result r = rt.run([&] { return km::run(c); });
        if (!r.reporter) return 0;  // the lowest living rank reports for all

        std::printf("kmeans         %llu points x %zu dims, %zu clusters, %zu iterations, %llu chunks of %llu points\n",
                    static_cast<unsigned long long>(c.points), c.dims, c.clusters, c.iterations,
                    static_cast<unsigned long long>(r.chunks), static_cast<unsigned long long>(r.chunk_points));
        if (c.distributed)
            std::printf("ranks          %d x %d threads, store with %d copies of each point\n", r.ranks, rt.threads(),
                        r.replicas);
        else
            std::printf("ranks          one process (not under mpiexec) x %d threads, no store\n", rt.threads());
        std::printf("lost ranks     %s (%llu recoveries here, %.1f ms), %llu points reloaded from the store\n",
                    r.lost_ranks.empty() ? "none" : ranks_json(r.lost_ranks).c_str(),
                    static_cast<unsigned long long>(r.recoveries), 1e3 * r.recovery_seconds,
                    static_cast<unsigned long long>(r.points_reloaded));
        std::printf("time           %.3f s (submit %.3f s)\n", r.seconds, r.submit_seconds);
        std::printf("assignments    %s\n", r.assignments.c_str());
        std::printf("centers        %s\n", r.centers_hash.c_str());
        std::printf("checksum       %s\n", r.checksum.c_str());
        bool verified = true;
        if (c.verify && c.distributed) {
            km::config one = c;
            one.distributed = false;
            const km::result ref = rt.run([&] { return km::run(one); });
            const double diff = relative_difference(r.centers, ref.centers);
            verified = ref.assignments == r.assignments && diff <= 1e-9;
            std::printf("verify         %s as one process (centers %s, largest relative difference %.3g)\n",
                        verified ? "same assignments" : "DIFFERENT assignments or centers",
                        ref.centers_hash == r.centers_hash ? "bit-identical" : "not bit-identical", diff);
        }
        if (json) {
            std::string centers = "[";
            char number[32];
            for (std::size_t i = 0; i < r.centers.size(); ++i) {
                std::snprintf(number, sizeof number, "%.17g", r.centers[i]);
                if (i) centers += ',';
                centers += number;
            }
            centers += "]";
            std::printf(
                "{\"program\":\"kmeans\",\"checksum\":\"%s\",\"assignments\":\"%s\",\"centers_hash\":\"%s\","
                "\"ranks\":%d,\"threads\":%d,\"points\":%llu,\"dims\":%zu,\"clusters\":%zu,\"iterations\":%zu,"
                "\"chunk_points\":%llu,\"chunks\":%llu,\"seed\":%llu,\"replicas\":%d,\"lost_ranks\":%s,"
                "\"recoveries\":%llu,\"points_reloaded\":%llu,\"seconds\":%.6f,\"submit_seconds\":%.6f,"
                "\"recovery_seconds\":%.6f,\"centers\":%s}\n",
                r.checksum.c_str(), r.assignments.c_str(), r.centers_hash.c_str(), r.ranks, rt.threads(),
                static_cast<unsigned long long>(c.points), c.dims, c.clusters, c.iterations,
                static_cast<unsigned long long>(r.chunk_points), static_cast<unsigned long long>(r.chunks),
                static_cast<unsigned long long>(c.seed), r.replicas, ranks_json(r.lost_ranks).c_str(),
                static_cast<unsigned long long>(r.recoveries), static_cast<unsigned long long>(r.points_reloaded),
                r.seconds, r.submit_seconds, r.recovery_seconds, centers.c_str());
        }
        return verified ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-kmeans: %s\n", e.what());
        return 2;
    }
}
