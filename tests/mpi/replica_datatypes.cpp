// A plain MPI program whose messages hold bytes with no value in them, made
// different in every process: long double's 6 unused bytes (x86-64), the
// padding of a struct, the gaps of a vector, and a struct with a long
// double inside. Replicas of one rank send different bytes there, which
// must not count as silent data corruption. Point-to-point (small messages
// and large ones), a broadcast, an allreduce and MPI_LONG_DOUBLE_INT's
// MAXLOC. The checksum folds in only the bytes that hold values, so the
// native run and a replicated one print the same.
// usage: replica_datatypes [rounds]

#include <mpi.h>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

std::uint64_t sum = 1469598103934665603ull;
std::uint64_t noise = 0;  // differs in every process

void fold(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) sum = (sum ^ p[i]) * 1099511628211ull;
}

unsigned char next_noise() {
    noise = noise * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<unsigned char>(noise >> 56);
}

// A long double's value in its first 10 bytes, noise in the other 6.
constexpr std::size_t value_bytes = 10;
void set(long double& x, long double v) {
    unsigned char raw[sizeof(long double)];
    for (auto& b : raw) b = next_noise();
    std::memcpy(raw, &v, value_bytes);
    std::memcpy(&x, raw, sizeof raw);
}
void fold(long double x) { fold(&x, value_bytes); }

void long_doubles(int rank, int right, int left, int n) {
    std::vector<long double> out(static_cast<std::size_t>(n)), in(out.size());
    for (int i = 0; i < n; ++i) set(out[static_cast<std::size_t>(i)], rank * 1.5L + i / 3.0L);
    MPI_Sendrecv(out.data(), n, MPI_LONG_DOUBLE, right, 1, in.data(), n, MPI_LONG_DOUBLE, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (long double x : in) fold(x);
}

struct padded {
    char c;  // then 7 bytes of padding
    double d;
};

void padded_structs(int rank, int right, int left) {
    MPI_Datatype t;
    const int lengths[2] = {1, 1};
    const MPI_Aint at[2] = {offsetof(padded, c), offsetof(padded, d)};
    const MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
    MPI_Type_create_struct(2, lengths, at, types, &t);
    MPI_Type_commit(&t);
    std::vector<padded> out(100), in(100);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::memset(&out[i], next_noise(), sizeof(padded));
        out[i].c = static_cast<char>('a' + i % 26);
        out[i].d = rank + i * 0.25;
    }
    MPI_Sendrecv(out.data(), 100, t, right, 2, in.data(), 100, t, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (const padded& p : in) {
        fold(&p.c, 1);
        fold(&p.d, sizeof p.d);
    }
    MPI_Type_free(&t);
}

void vector_with_gaps(int rank, int right, int left) {
    MPI_Datatype every_other;
    MPI_Type_vector(64, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    std::vector<double> out(128), in(128, 0.0);
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (i % 2 == 0) {
            out[i] = rank * 100.0 + static_cast<double>(i);
        } else {
            std::memset(&out[i], next_noise(), sizeof(double));  // a gap
        }
    }
    MPI_Sendrecv(out.data(), 1, every_other, right, 3, in.data(), 1, every_other, left, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (std::size_t i = 0; i < in.size(); i += 2) fold(&in[i], sizeof(double));
    MPI_Type_free(&every_other);
}

struct with_long_double {
    int n;
    long double x;
};

void struct_with_long_double(int rank, int right, int left) {
    MPI_Datatype t;
    const int lengths[2] = {1, 1};
    const MPI_Aint at[2] = {offsetof(with_long_double, n), offsetof(with_long_double, x)};
    const MPI_Datatype types[2] = {MPI_INT, MPI_LONG_DOUBLE};
    MPI_Type_create_struct(2, lengths, at, types, &t);
    MPI_Type_commit(&t);
    std::vector<with_long_double> out(50), in(50);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].n = rank * 1000 + static_cast<int>(i);
        set(out[i].x, rank + i / 7.0L);
    }
    MPI_Sendrecv(out.data(), 50, t, right, 4, in.data(), 50, t, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (const auto& w : in) {
        fold(&w.n, sizeof w.n);
        fold(w.x);
    }
    MPI_Type_free(&t);
}

void collectives(int rank, int size) {
    std::vector<long double> v(32), total(32);
    for (std::size_t i = 0; i < v.size(); ++i) set(v[i], (rank + 1) * 0.5L + static_cast<long double>(i));
    MPI_Allreduce(v.data(), total.data(), 32, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (long double x : total) fold(x);
    long double root_value;
    set(root_value, rank == 0 ? 3.25L : 0.0L);
    MPI_Bcast(&root_value, 1, MPI_LONG_DOUBLE, 0, MPI_COMM_WORLD);
    fold(root_value);
    struct {
        long double value;
        int rank;
    } mine, best;
    std::memset(&mine, next_noise(), sizeof mine);
    set(mine.value, static_cast<long double>((rank * 7) % size));
    mine.rank = rank;
    MPI_Allreduce(&mine, &best, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    fold(best.value);
    fold(&best.rank, sizeof best.rank);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    noise = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ull;
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < rounds; ++round) {
        long_doubles(rank, right, left, 100);    // a small message (copied at once)
        long_doubles(rank, right, left, 20000);  // a large one (320 KB)
        padded_structs(rank, right, left);
        vector_with_gaps(rank, right, left);
        struct_with_long_double(rank, right, left);
        collectives(rank, size);
    }
    std::uint64_t all = 0;
    MPI_Reduce(&sum, &all, 1, MPI_UINT64_T, MPI_BXOR, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("checksum %016llx\n", static_cast<unsigned long long>(all));
    MPI_Finalize();
}
