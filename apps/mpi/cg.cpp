// Conjugate gradients in the shape of the NAS CG benchmark: the inverse
// power method on a sparse symmetric positive definite matrix, each outer
// iteration solving A z = x with 25 CG iterations. Rows are split in blocks
// over the ranks; a matrix-vector product gathers the direction vector with
// MPI_Allgatherv, and every dot product is an MPI_Allreduce. A plain MPI
// program: process replication runs it unchanged.

#include "result.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// A symmetric random number for the pair (i, j): the same for (j, i).
std::uint64_t pair_hash(std::int64_t i, std::int64_t j) {
    std::uint64_t a = static_cast<std::uint64_t>(std::min(i, j)), b = static_cast<std::uint64_t>(std::max(i, j));
    std::uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

// Rows [first, first + rows) of the matrix in compressed rows: a random band
// pattern, symmetric, and diagonally dominant (so positive definite).
struct sparse_rows {
    std::vector<int> start, column;
    std::vector<double> value;
};

sparse_rows make_rows(int n, int first, int rows, int band, int density) {
    sparse_rows m;
    m.start.push_back(0);
    for (int i = first; i < first + rows; ++i) {
        double diagonal = 1.0;
        std::vector<std::pair<int, double>> entries;
        for (int j = std::max(0, i - band); j <= std::min(n - 1, i + band); ++j) {
            if (j == i) continue;
            const std::uint64_t h = pair_hash(i, j);
            if (h % static_cast<std::uint64_t>(density) != 0) continue;
            const double v = -1.0 / static_cast<double>(1 + (h >> 32) % 16);
            entries.emplace_back(j, v);
            diagonal += -v;
        }
        entries.emplace_back(i, diagonal + 0.5);
        std::sort(entries.begin(), entries.end());
        for (auto& [j, v] : entries) {
            m.column.push_back(j);
            m.value.push_back(v);
        }
        m.start.push_back(static_cast<int>(m.column.size()));
    }
    return m;
}

struct distribution {
    std::vector<int> counts, displs;
    int first = 0, rows = 0;
};

distribution split(int n, int size, int rank) {
    distribution d;
    for (int r = 0; r < size; ++r) {
        d.counts.push_back(n / size + (r < n % size ? 1 : 0));
        d.displs.push_back(r == 0 ? 0 : d.displs.back() + d.counts[static_cast<std::size_t>(r - 1)]);
    }
    d.first = d.displs[static_cast<std::size_t>(rank)];
    d.rows = d.counts[static_cast<std::size_t>(rank)];
    return d;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double local = 0.0, sum = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) local += a[i] * b[i];
    MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

// q = A p, with p gathered whole from its blocks.
void multiply(const sparse_rows& a, const distribution& d, const std::vector<double>& p, std::vector<double>& whole,
              std::vector<double>& q) {
    MPI_Allgatherv(p.data(), d.rows, MPI_DOUBLE, whole.data(), d.counts.data(), d.displs.data(), MPI_DOUBLE,
                   MPI_COMM_WORLD);
    for (int i = 0; i < d.rows; ++i) {
        double s = 0.0;
        for (int k = a.start[static_cast<std::size_t>(i)]; k < a.start[static_cast<std::size_t>(i + 1)]; ++k)
            s += a.value[static_cast<std::size_t>(k)] *
                 whole[static_cast<std::size_t>(a.column[static_cast<std::size_t>(k)])];
        q[static_cast<std::size_t>(i)] = s;
    }
}

// 25 iterations of CG on A z = x from z = 0; returns ||x - A z||.
double solve(const sparse_rows& a, const distribution& d, const std::vector<double>& x, std::vector<double>& z) {
    const auto rows = static_cast<std::size_t>(d.rows);
    std::vector<double> r = x, p = x, q(rows), whole(static_cast<std::size_t>(d.displs.back() + d.counts.back()));
    std::fill(z.begin(), z.end(), 0.0);
    double rho = dot(r, r);
    for (int it = 0; it < 25; ++it) {
        multiply(a, d, p, whole, q);
        const double alpha = rho / dot(p, q);
        for (std::size_t i = 0; i < rows; ++i) {
            z[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        const double rho_next = dot(r, r);
        const double beta = rho_next / rho;
        rho = rho_next;
        for (std::size_t i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
    }
    multiply(a, d, z, whole, q);
    for (std::size_t i = 0; i < rows; ++i) r[i] = x[i] - q[i];
    return std::sqrt(dot(r, r));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"conjugate gradients in the shape of NAS CG (plain MPI)"};
    int n = 14000, band = 300, density = 12, outer = 15;
    double shift = 20.0;
    bool json = false;
    app.add_option("--rows", n, "order of the matrix")->check(CLI::Range(16, 1 << 26));
    app.add_option("--band", band, "half-width of the band the nonzeros lie in")->check(CLI::Range(1, 1 << 20));
    app.add_option("--density", density, "one in this many band entries is nonzero")->check(CLI::Range(1, 1 << 20));
    app.add_option("--iterations", outer, "outer iterations (each 25 CG iterations)")->check(CLI::Range(1, 10000));
    app.add_option("--shift", shift, "the shift of the eigenvalue estimate, as NAS's");
    app.add_flag("--json", json, "print the result as one JSON object");
    CLI11_PARSE(app, argc, argv);

    const auto [rank, size] = mpi_programs::start(argc, argv);
    const distribution d = split(n, size, rank);
    const sparse_rows a = make_rows(n, d.first, d.rows, band, density);
    std::vector<double> x(static_cast<std::size_t>(d.rows), 1.0), z(x.size());

    const double start = MPI_Wtime();
    double zeta = 0.0, residual = 0.0;
    for (int it = 0; it < outer; ++it) {
        residual = solve(a, d, x, z);
        zeta = shift + 1.0 / dot(x, z);
        const double norm = 1.0 / std::sqrt(dot(z, z));
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = norm * z[i];
    }
    const double seconds = MPI_Wtime() - start;

    std::vector<double> all(rank == 0 ? static_cast<std::size_t>(n) : 0);
    MPI_Gatherv(x.data(), d.rows, MPI_DOUBLE, all.data(), d.counts.data(), d.displs.data(), MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    std::uint64_t sum = mpi_programs::checksum(all.data(), all.size() * sizeof(double));
    sum = mpi_programs::checksum(&zeta, sizeof zeta, sum);
    char zeta_text[32];
    std::snprintf(zeta_text, sizeof zeta_text, "%.13e", zeta);
    mpi_programs::report(json, "cg", sum,
                         {{"ranks", size},
                          {"rows", n},
                          {"nonzeros_per_row", static_cast<double>(a.value.size()) / std::max(1, d.rows)},
                          {"zeta", zeta_text},
                          {"residual", residual},
                          {"seconds", seconds}});
    MPI_Finalize();
    return 0;
}
