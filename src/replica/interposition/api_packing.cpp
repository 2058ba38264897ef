// Packing with a communicator: MPI uses it only for the data
// representation, the same on every process here, so the program's
// communicator (the layer's own handle) is checked and MPI gets its world.

#include "entry_points.hpp"

namespace rampart::replica::detail::entry {

int pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position, const char*) {
    return PMPI_Pack(inbuf, incount, type, outbuf, outsize, position, MPI_COMM_WORLD);
}

int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type, const char*) {
    return PMPI_Unpack(inbuf, insize, position, outbuf, outcount, type, MPI_COMM_WORLD);
}

int pack_size(int incount, MPI_Datatype type, int* size, const char*) {
    return PMPI_Pack_size(incount, type, MPI_COMM_WORLD, size);
}

}  // namespace rampart::replica::detail::entry
