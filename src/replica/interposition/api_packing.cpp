// Packing with a communicator: MPI uses it only for the data
// representation, the same on every process here, so the program's
// communicator (the layer's own handle) is checked and MPI gets its world.

#include "api.hpp"

namespace rp = rampart::replica::detail;

extern "C" {

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position,
             MPI_Comm comm) {
    return rp::with_comm(comm, "MPI_Pack", [&](rp::communicator& c) {
        if (int rc = rp::check_buffer(&c, incount, type, "MPI_Pack")) return rc;
        return PMPI_Pack(inbuf, incount, type, outbuf, outsize, position, MPI_COMM_WORLD);
    });
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type,
               MPI_Comm comm) {
    return rp::with_comm(comm, "MPI_Unpack", [&](rp::communicator& c) {
        if (int rc = rp::check_buffer(&c, outcount, type, "MPI_Unpack")) return rc;
        return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, type, MPI_COMM_WORLD);
    });
}

int MPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int* size) {
    return rp::with_comm(comm, "MPI_Pack_size", [&](rp::communicator& c) {
        if (int rc = rp::check_buffer(&c, incount, type, "MPI_Pack_size")) return rc;
        return PMPI_Pack_size(incount, type, MPI_COMM_WORLD, size);
    });
}

}  // extern "C"
