// A plain MPI program: no rampart header, nothing to change. Run it with
//   tools/rampart-run -n 4 --replicas 2 -- build/apps/examples/rampart-example-replicated
// and every rank runs twice; kill one copy of a rank (--kill 1.0@send30)
// and the other goes on alone: the printed checksum stays the native one.
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int points = 1000, left = (rank + size - 1) % size, right = (rank + 1) % size;
    std::vector<double> u(points + 2), next(points + 2);
    for (int i = 1; i <= points; ++i) u[i] = std::sin(0.01 * (rank * points + i));

    double energy = 0.0;
    for (int step = 0; step < 100; ++step) {
        // Heat on a ring of ranks: the edge points go to the neighbours.
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[points + 1], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[points], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int i = 1; i <= points; ++i) next[i] = u[i] + 0.2 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        u.swap(next);
        double mine = 0.0;
        for (int i = 1; i <= points; ++i) mine += u[i] * u[i];
        MPI_Allreduce(&mine, &energy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, &energy, sizeof bits);
    if (rank == 0) std::printf("result energy %.15g checksum %016llx\n", energy, static_cast<unsigned long long>(bits));
    MPI_Finalize();
    return 0;
}
