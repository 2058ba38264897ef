#pragma once
// The bytes a (buffer, count, datatype) triple stands for, as MPI would
// send them: hashed for acknowledgements, copied for unexpected messages.

#include "hashing.hpp"

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rampart::replica::detail {

/// Bytes of data in count elements of type (not their extent).
std::size_t data_bytes(int count, MPI_Datatype type);
/// The elements lie one after the other with no gap, from buf on.
bool contiguous(MPI_Datatype type);
/// The first `bytes` data bytes of (buf, count, type), packed.
std::vector<char> pack(const void* buf, int count, MPI_Datatype type);
/// XXH3 of the first `bytes` data bytes of (buf, count, type).
std::uint64_t hash_data(const void* buf, int count, MPI_Datatype type, std::size_t bytes);
/// hash_data, calling `between()` after every piece of a large contiguous
/// buffer (the same hash as in one piece).
std::uint64_t hash_data_in_pieces(const void* buf, int count, MPI_Datatype type, std::size_t bytes,
                                  void (*between)(void*), void* context);
/// Writes packed bytes into (buf, count, type); `bytes` fit in it.
void unpack(const std::vector<char>& from, std::size_t bytes, void* buf, int count, MPI_Datatype type);

/// Copies count elements between buffers of possibly different types.
void copy_data(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype);

/// Memory for count elements of type, as MPI lays them out: element 0
/// starts at `base`.
struct typed_buffer {
    std::vector<char> bytes;
    char* base = nullptr;
    typed_buffer(int count, MPI_Datatype type);
    /// A copy of (buf, count, type), in the same layout.
    typed_buffer(const void* buf, int count, MPI_Datatype type);
};

}  // namespace rampart::replica::detail
