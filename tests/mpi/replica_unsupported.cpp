// A plain MPI program that calls MPI_Win_create, which process replication
// does not support: a replicated run must end at that call with a message
// naming it, never go on with a wrong behaviour.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    double memory[4] = {};
    MPI_Win win;
    MPI_Win_create(memory, sizeof memory, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    std::printf("MPI_Win_create returned\n");
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
