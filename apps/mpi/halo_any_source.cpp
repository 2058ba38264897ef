// Heat diffusion on a line cut into blocks, whose halos are received from
// MPI_ANY_SOURCE and placed by status.MPI_SOURCE, in the order they arrive
// (MPI_Waitany): which neighbour's halo lands first differs from run to
// run, the result does not (the program is send-deterministic). A plain MPI
// program: process replication runs it unchanged.

#include "result.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <array>
#include <vector>

namespace {

// A neighbour can be one step ahead (it needs only this step's halo to go
// on): the tag alternates with the step, so a receive from any source of
// this step never takes the neighbour's halo of the next.
int halo_tag(int step) { return 10 + step % 2; }

// Receives the halos of both neighbours, placing each by its source.
void exchange(std::vector<double>& u, int rank, int size, int step) {
    const int tag = halo_tag(step);
    const int left = rank - 1, right = rank + 1;
    const int expected = (left >= 0) + (right < size);
    std::array<double, 2> incoming{};
    std::array<MPI_Request, 4> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int k = 0; k < expected; ++k)
        MPI_Irecv(&incoming[static_cast<std::size_t>(k)], 1, MPI_DOUBLE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD,
                  &requests[static_cast<std::size_t>(k)]);
    if (left >= 0) MPI_Isend(&u[1], 1, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, &requests[2]);
    if (right < size) MPI_Isend(&u[u.size() - 2], 1, MPI_DOUBLE, right, tag, MPI_COMM_WORLD, &requests[3]);
    for (int done = 0; done < expected;) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        MPI_Waitany(2, requests.data(), &index, &status);
        if (index == MPI_UNDEFINED) break;
        const double v = incoming[static_cast<std::size_t>(index)];
        if (status.MPI_SOURCE == left)
            u.front() = v;
        else
            u.back() = v;
        ++done;
    }
    MPI_Waitall(2, requests.data() + 2, MPI_STATUSES_IGNORE);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"heat on a line, halos received from any source (plain MPI)"};
    int points = 4096, steps = 2000;
    bool json = false;
    app.add_option("--points", points, "points per rank")->check(CLI::Range(2, 1 << 24));
    app.add_option("--steps", steps, "time steps")->check(CLI::Range(1, 1 << 24));
    app.add_flag("--json", json, "print the result as one JSON object");
    CLI11_PARSE(app, argc, argv);

    const auto [rank, size] = mpi_programs::start(argc, argv);
    std::vector<double> u(static_cast<std::size_t>(points) + 2, 0.0), next(u.size());
    for (int i = 1; i <= points; ++i) u[static_cast<std::size_t>(i)] = ((rank * points + i) % 97) / 97.0;
    const double start = MPI_Wtime();
    for (int s = 0; s < steps; ++s) {
        exchange(u, rank, size, s);
        for (std::size_t i = 1; i + 1 < u.size(); ++i) next[i] = u[i] + 0.25 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        std::swap(u, next);
    }
    const double seconds = MPI_Wtime() - start;
    std::vector<double> all(rank == 0 ? static_cast<std::size_t>(points) * static_cast<std::size_t>(size) : 0);
    MPI_Gather(u.data() + 1, points, MPI_DOUBLE, all.data(), points, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    mpi_programs::report(json, "halo_any_source", mpi_programs::checksum(all.data(), all.size() * sizeof(double)),
                         {{"ranks", size}, {"points", points}, {"steps", steps}, {"seconds", seconds}});
    MPI_Finalize();
    return 0;
}
