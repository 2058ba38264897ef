// Surviving a crash with a spare rank: a plain iterative program (a 1-D heat
// equation on a ring of ranks, a halo exchange every iteration) with no
// recovery code at all. Started with a spare process, it prints the same
// result when a rank is killed: the spare takes the dead rank's place and
// runs the program from its start, and the survivors, which go on where they
// are, send it again from their send logs what it needs.
//
//   tools/rampart-run -n 4 -- build/apps/examples/rampart-example-survive
//   tools/rampart-run -n 4 --spares 1 --kill 1@iter5 -- build/apps/examples/rampart-example-survive
//
// Both print the same "result" line (rank 0); the second run's report, on
// stderr, says that rank 1 was lost and a spare used.
#include <rampart/rampart.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace comm = rampart::comm;

constexpr int points = 1000, iterations = 20;
constexpr int to_right = 0, to_left = 1, to_rank_0 = 2;  // tags

int main() {
    rampart::runtime rt;
    const int me = comm::rank(), n = comm::size();
    const int left = (me + n - 1) % n, right = (me + 1) % n;

    std::vector<double> u(points + 2);  // u[0] and u[points + 1]: the neighbours' edge points
    for (int i = 1; i <= points; ++i) u[i] = std::sin(0.01 * (me * points + i));

    for (int it = 0; it < iterations; ++it) {
        rampart::recovery::report_iteration(it);  // for the report; --kill R@iterN strikes here
        comm::isend(left, to_left, u[1]);
        comm::isend(right, to_right, u[points]);
        u[0] = comm::irecv<double>(left, to_right).get();
        u[points + 1] = comm::irecv<double>(right, to_left).get();
        std::vector<double> next(u);
        for (int i = 1; i <= points; ++i) next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        u = std::move(next);
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
