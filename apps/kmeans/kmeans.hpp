#pragma once
// k-means with shrinking recovery, the first application of the restore paper
// (VI-C): the points are submitted once to the replicated store
// (rampart::store); when ranks die with no spare to replace them, the
// survivors split the dead ranks' points among themselves, load them from the
// store and go on.
//
// The points are generated from a seed (point i depends only on the seed and
// i) and cut into chunks of fixed size. Each iteration every rank computes,
// for each chunk it owns, the chunk's partial: per cluster the sum of the
// coordinates of its points (added in point order) and their count. The new
// centers are the sums of all chunks' partials added in chunk order 0..C-1,
// whoever owns the chunks: so a run gives the same bits on any number of
// ranks and after any failures.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rampart::kmeans {

struct config {
    std::uint64_t points = 65536;
    std::size_t dims = 4;
    std::size_t clusters = 8;
    std::size_t iterations = 20;
    std::uint64_t chunk_points = 512;  ///< points per chunk, the unit of work and of reassignment
    std::uint64_t seed = 1;            ///< of the points
    int replicas = 0;                  ///< copies of each point in the store; 0: the store's default
    bool verify = false;               ///< compare reloaded points with the generator
    bool distributed = false;          ///< across the ranks of mpiexec (rampart::comm, rampart::store)
};

/// Writes the `dims` coordinates of points [first, first + count) to `out`
/// (count * dims values): clustered data around `clusters` seeded centers.
void make_points(const config& c, std::uint64_t first, std::uint64_t count, std::span<double> out);

/// What one chunk adds to an iteration.
struct chunk_partial {
    std::uint64_t assignment_digest = 0;  ///< XXH3-64 of the chunk's assignments (one uint32 per point)
    std::vector<std::uint64_t> counts;    ///< points per cluster
    std::vector<double> sums;             ///< per cluster, the sum of its points' coordinates in point order
};

/// Assigns each point of a chunk (points.size() / dims points) to its nearest
/// center (ties to the lower cluster) and sums them up.
chunk_partial assign_chunk(std::span<const double> points, std::span<const double> centers, std::size_t dims,
                           std::size_t clusters);

/// The next centers from every chunk's partial, added in chunk order; a
/// cluster without points keeps its center.
std::vector<double> update_centers(const std::vector<chunk_partial>& partials, std::span<const double> centers,
                                   std::size_t dims, std::size_t clusters);

struct result {
    std::vector<double> centers;  ///< after the last iteration, cluster by cluster
    std::string assignments;  ///< hex XXH3-64 over the chunks' assignment digests of the last iteration, in chunk order
    std::string centers_hash;  ///< hex XXH3-64 of the centers' bytes
    std::string checksum;      ///< hex XXH3-64 over both: what a run is compared by
    std::uint64_t chunks = 0;
    std::uint64_t chunk_points = 0;  ///< points per chunk (the last may have fewer)
    int ranks = 1;
    int replicas = 0;                   ///< copies of each point in the store (0: no store, one process)
    bool reporter = true;               ///< this rank prints the result (the lowest living rank)
    std::vector<int> lost_ranks;        ///< ranks that died and whose chunks the survivors took over
    std::uint64_t recoveries = 0;       ///< recoveries this rank went through (one per failure seen, or fewer)
    std::uint64_t points_reloaded = 0;  ///< loaded from the store by the living ranks, all together
    double seconds = 0;                 ///< submit and iterations, recoveries included
    double submit_seconds = 0;          ///< submitting the points to the store
    double recovery_seconds = 0;        ///< this rank's time in recoveries
};

/// Checks the configuration; throws rampart::invalid_argument naming the problem.
void validate(const config& c);

/// Runs k-means; needs a live rampart::runtime. Distributed, it runs on every
/// rank and survives ranks that die (no spares needed); every living rank
/// returns the same centers and hashes.
result run(const config& c);

}  // namespace rampart::kmeans
