// A plain MPI program that reads an input file and writes files, as real
// programs do: each rank a file of its own, line by line, and rank 0 a
// summary. Under replication without their own directories the replicas
// of a rank write the same files over each other.
// usage: replica_files [steps]   (reads input.txt: one integer, the seed)
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
    long seed = 0;
    if (FILE* in = std::fopen("input.txt", "r")) {
        if (std::fscanf(in, "%ld", &seed) != 1) seed = 0;
        std::fclose(in);
    }
    FILE* out = std::fopen(("rank-" + std::to_string(rank) + ".txt").c_str(), "w");
    std::uint64_t value = static_cast<std::uint64_t>(seed) * 1000003u + static_cast<std::uint64_t>(rank);
    for (int step = 0; step < steps; ++step) {
        std::uint64_t from_left = 0;
        MPI_Sendrecv(&value, 1, MPI_UINT64_T, (rank + 1) % size, 0, &from_left, 1, MPI_UINT64_T,
                     (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        value = (value ^ (value >> 29)) * 6364136223846793005u + from_left;
        std::fprintf(out, "step %d value %016llx\n", step, static_cast<unsigned long long>(value));
        std::fflush(out);  // as a program that logs as it goes: replicas' lines would interleave
    }
    std::fclose(out);
    std::uint64_t sum = 0;
    MPI_Reduce(&value, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE* summary = std::fopen("summary.txt", "w");
        std::fprintf(summary, "seed %ld ranks %d steps %d sum %016llx\n", seed, size, steps,
                     static_cast<unsigned long long>(sum));
        std::fclose(summary);
        std::printf("result checksum %016llx\n", static_cast<unsigned long long>(sum));
    }
    MPI_Finalize();
    return 0;
}
