// A program that calls MPI the way a Fortran program does, through the
// Fortran bindings (replica_fortran_binding): under replication it must be
// refused, since its calls never pass through the layer.
#include <mpi.h>

#include <cstdio>

extern "C" {
void mpi_init_(MPI_Fint* ierr);
void mpi_finalize_(MPI_Fint* ierr);
void mpi_comm_size_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr);
}

int main() {
    MPI_Fint ierr = 0, size = 0, world = 0;  // Fortran's MPI_COMM_WORLD in Open MPI
    mpi_init_(&ierr);
    mpi_comm_size_(&world, &size, &ierr);
    std::printf("ranks %d checksum %016x\n", static_cast<int>(size), static_cast<unsigned>(size));
    mpi_finalize_(&ierr);
    return 0;
}
