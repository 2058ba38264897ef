// A 2-D Jacobi solver of Laplace's equation on a Cartesian communicator: the
// grid is cut into blocks, each rank exchanges its four halos with
// MPI_Sendrecv (columns through a vector datatype) and the residual is
// summed with MPI_Allreduce. A plain MPI program: process replication runs
// it unchanged.

#include "result.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <array>
#include <cmath>
#include <vector>

namespace {

struct block {
    int rows = 0, cols = 0;       // interior
    std::vector<double> u, next;  // (rows + 2) x (cols + 2), with halos
    double& at(std::vector<double>& v, int i, int j) const { return v[static_cast<std::size_t>(i * (cols + 2) + j)]; }
};

// The fixed boundary: hot on the top edge of the whole grid.
void initialise(block& b, const std::array<int, 2>& coords) {
    b.u.assign(static_cast<std::size_t>((b.rows + 2) * (b.cols + 2)), 0.0);
    if (coords[0] == 0)
        for (int j = 0; j < b.cols + 2; ++j) b.at(b.u, 0, j) = 100.0;
    b.next = b.u;
}

void exchange_halos(block& b, MPI_Comm grid, MPI_Datatype column) {
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);
    const int w = b.cols + 2;
    double* u = b.u.data();
    MPI_Sendrecv(u + w + 1, b.cols, MPI_DOUBLE, up, 0, u + (b.rows + 1) * w + 1, b.cols, MPI_DOUBLE, down, 0, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + b.rows * w + 1, b.cols, MPI_DOUBLE, down, 1, u + 1, b.cols, MPI_DOUBLE, up, 1, grid,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + w + 1, 1, column, left, 2, u + w + b.cols + 1, 1, column, right, 2, grid, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + w + b.cols, 1, column, right, 3, u + w, 1, column, left, 3, grid, MPI_STATUS_IGNORE);
}

// One sweep; returns the sum of squared changes of this block.
double sweep(block& b) {
    double change = 0.0;
    for (int i = 1; i <= b.rows; ++i)
        for (int j = 1; j <= b.cols; ++j) {
            const double v =
                0.25 * (b.at(b.u, i - 1, j) + b.at(b.u, i + 1, j) + b.at(b.u, i, j - 1) + b.at(b.u, i, j + 1));
            change += (v - b.at(b.u, i, j)) * (v - b.at(b.u, i, j));
            b.at(b.next, i, j) = v;
        }
    for (int i = 1; i <= b.rows; ++i)
        for (int j = 1; j <= b.cols; ++j) b.at(b.u, i, j) = b.at(b.next, i, j);
    return change;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"2-D Jacobi on a Cartesian communicator (plain MPI)"};
    int n = 256, iterations = 200, check_every = 10;
    bool json = false, progress = false;
    app.add_option("--size", n, "grid points per side")->check(CLI::Range(4, 1 << 14));
    app.add_option("--iterations", iterations, "sweeps")->check(CLI::Range(1, 1 << 20));
    app.add_option("--check-every", check_every, "sweeps between residual sums")->check(CLI::Range(1, 1 << 20));
    app.add_flag("--json", json, "print the result as one JSON object");
    app.add_flag("--progress", progress, "rank 0 prints each residual sum as it comes");
    CLI11_PARSE(app, argc, argv);

    const int size = mpi_programs::start(argc, argv).size;
    int rank = 0;
    std::array<int, 2> dims{0, 0}, periods{0, 0}, coords{0, 0};
    MPI_Dims_create(size, 2, dims.data());
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims.data(), periods.data(), 0, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords.data());
    if (n % dims[0] || n % dims[1]) {
        if (rank == 0)
            std::fprintf(stderr, "--size %d is not divisible by the %d x %d grid of ranks\n", n, dims[0], dims[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    block b;
    b.rows = n / dims[0];
    b.cols = n / dims[1];
    initialise(b, coords);
    MPI_Datatype column;
    MPI_Type_vector(b.rows, 1, b.cols + 2, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    const double start = MPI_Wtime();
    double residual = 0.0;
    for (int it = 1; it <= iterations; ++it) {
        exchange_halos(b, grid, column);
        const double change = sweep(b);
        if (it % check_every != 0 && it != iterations) continue;
        MPI_Allreduce(&change, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
        if (progress && rank == 0) {
            std::printf("jacobi2d: sweep %d residual %.17g\n", it, residual);
            std::fflush(stdout);
        }
    }
    const double seconds = MPI_Wtime() - start;

    // The checksum covers every interior value, gathered in rank order.
    std::vector<double> mine;
    for (int i = 1; i <= b.rows; ++i)
        for (int j = 1; j <= b.cols; ++j) mine.push_back(b.at(b.u, i, j));
    std::vector<double> all(rank == 0 ? static_cast<std::size_t>(n) * static_cast<std::size_t>(n) : 0);
    MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), static_cast<int>(mine.size()),
               MPI_DOUBLE, 0, grid);
    mpi_programs::report(
        json, "jacobi2d", mpi_programs::checksum(all.data(), all.size() * sizeof(double)),
        {{"ranks", size}, {"size", n}, {"iterations", iterations}, {"residual", residual}, {"seconds", seconds}});
    MPI_Type_free(&column);
    MPI_Comm_free(&grid);
    MPI_Finalize();
    return 0;
}
