// Checkpoints in the replicated store: the heat equation of survive_a_crash,
// saving each rank's field every 10 iterations. A spare that replaces a
// killed rank resumes from the newest checkpoint instead of from the start,
// and the survivors' send logs only keep what came after the checkpoints.
//
//   tools/rampart-run -n 4 -- build/apps/examples/rampart-example-checkpoint
//   tools/rampart-run -n 4 --spares 1 --kill 1@iter25 -- build/apps/examples/rampart-example-checkpoint
//
// Both print the same "result" line (rank 0); in the second, rank 1's
// replacement says on stderr that it resumes after iteration 19.
#include <rampart/rampart.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace comm = rampart::comm;

constexpr int points = 1000, iterations = 40, checkpoint_every = 10;
constexpr int to_right = 0, to_left = 1, to_rank_0 = 2;  // tags

int main() {
    rampart::runtime rt;
    const int me = comm::rank(), n = comm::size();
    const int left = (me + n - 1) % n, right = (me + 1) % n;

    // On every rank, before any message: room for the serialised field.
    rampart::store::checkpoints checkpoints(sizeof(double) * (points + 2) + 64);
    std::vector<double> u(points + 2);  // u[0] and u[points + 1]: the neighbours' edge points
    for (int i = 1; i <= points; ++i) u[i] = std::sin(0.01 * (me * points + i));
    int start = 0;
    if (auto saved = checkpoints.restore<std::vector<double>>()) {  // only on a replacement
        u = saved->state;
        start = static_cast<int>(saved->iteration) + 1;
        std::fprintf(stderr, "rank %d resumes after iteration %d from a checkpoint\n", me, start - 1);
    }

    for (int it = start; it < iterations; ++it) {
        rampart::recovery::report_iteration(it);  // for the report; --kill R@iterN strikes here
        comm::isend(left, to_left, u[1]);
        comm::isend(right, to_right, u[points]);
        u[0] = comm::irecv<double>(left, to_right).get();
        u[points + 1] = comm::irecv<double>(right, to_left).get();
        std::vector<double> next(u);
        for (int i = 1; i <= points; ++i) next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        u = std::move(next);
        // Collective. Here every message of this iteration has been received,
        // and none of the next one sent: a consistent cut.
        if (it % checkpoint_every == checkpoint_every - 1) checkpoints.save(it, u);
    }

    double energy = 0;  // this rank's part of the result
    for (int i = 1; i <= points; ++i) energy += u[i] * u[i];
    if (me != 0) {
        comm::isend(0, to_rank_0, energy);
        return 0;
    }
    for (int r = 1; r < n; ++r)
        energy += comm::irecv<double>(r, to_rank_0).get();  // in rank order: same bits every run
    std::printf("result %.17g\n", energy);
}
