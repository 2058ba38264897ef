// The shape of MPI's Fortran bindings (Open MPI's libmpi_mpifh): entry
// points named as a Fortran compiler names MPI_INIT and MPI_FINALIZE, which
// call MPI's C library by its PMPI names, below any interposed layer.
#include <mpi.h>

extern "C" {
void mpi_init_(MPI_Fint* ierr) { *ierr = PMPI_Init(nullptr, nullptr); }
void mpi_finalize_(MPI_Fint* ierr) { *ierr = PMPI_Finalize(); }
void mpi_comm_size_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr) {
    int n = 0;
    *ierr = PMPI_Comm_size(PMPI_Comm_f2c(*comm), &n);
    *size = n;
}
}
