// An MPI program that names its state for re-created replicas: heat on a
// ring of ranks, with set-up communication (parameters broadcast, a
// duplicated communicator) before its first sync, as real codes have.
//   replica_recreation [steps] [points per rank] [cross]
// With "cross", each step also sends a value that the next step receives:
// a message across rampart_replica_sync(), which re-creation refuses.
#include <mpi.h>
#include <rampart/replica/replica.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int params[2] = {300, 100000};
    if (rank == 0 && argc > 1) params[0] = std::atoi(argv[1]);
    if (rank == 0 && argc > 2) params[1] = std::atoi(argv[2]);
    MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm ring;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    const int steps = params[0], points = params[1];
    const bool cross = argc > 3 && std::strcmp(argv[3], "cross") == 0;
    double carried = 0.0;
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    if (rank == 0) std::printf("heat on a ring: %d ranks, %d points each, %d steps\n", size, points, steps);

    std::vector<double> u(static_cast<std::size_t>(points) + 2), next(u.size());
    for (int i = 1; i <= points; ++i) u[static_cast<std::size_t>(i)] = std::sin(0.001 * (rank * points + i));
    int step = 0;
    double energy = 0.0;
    rampart_replica_protect(u.data(), u.size() * sizeof(double));
    rampart_replica_protect(&step, sizeof step);
    rampart_replica_protect(&energy, sizeof energy);
    for (; step < steps; ++step) {
        rampart_replica_sync();  // the state is complete here
        if (cross && step > 0) MPI_Recv(&carried, 1, MPI_DOUBLE, right, 7, ring, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[static_cast<std::size_t>(points) + 1], 1, MPI_DOUBLE, right, 0,
                     ring, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[static_cast<std::size_t>(points)], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     ring, MPI_STATUS_IGNORE);
        for (std::size_t i = 1; i <= static_cast<std::size_t>(points); ++i)
            next[i] = u[i] + 0.2 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        std::copy(next.begin() + 1, next.end() - 1, u.begin() + 1);  // u keeps its address: it is protected
        double mine = 0.0;
        for (std::size_t i = 1; i <= static_cast<std::size_t>(points); ++i) mine += u[i] * u[i];
        MPI_Allreduce(&mine, &energy, 1, MPI_DOUBLE, MPI_SUM, ring);
        if (cross) MPI_Send(&u[1], 1, MPI_DOUBLE, left, 7, ring);
        if (rank == 0 && (step + 1) % 100 == 0) std::printf("step %d energy %.15g\n", step + 1, energy);
    }
    if (cross && steps > 0) MPI_Recv(&carried, 1, MPI_DOUBLE, right, 7, ring, MPI_STATUS_IGNORE);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &energy, sizeof bits);
    if (rank == 0) std::printf("result energy %.15g checksum %016llx\n", energy, static_cast<unsigned long long>(bits));
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
