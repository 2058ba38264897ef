#pragma once
// The bytes of a message that hold its values. Replicas compare the hashes
// of what they send and receive; bytes that hold no value may differ
// between replicas without any fault, and must not be compared. On x86-64
// a long double is 16 bytes of which 10 hold the value (the x87 format);
// the other 6 are whatever the stack held. Holes between the fields of a
// derived datatype are never sent (MPI packs only the type map), so they
// need nothing here; a long double inside one does.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rampart::replica::detail {

/// Bytes of one packed element that hold no value: [at, at + bytes).
struct hole {
    std::size_t at = 0;
    std::size_t bytes = 0;
};

/// The holes of one element of `type` in its packed form (in type-map
/// order), empty for nearly every type; kept with the type's other facts
/// (type_facts.hpp), so each type's are worked out once.
const std::vector<hole>& holes_of(MPI_Datatype type);
/// The same, worked out from the type map now.
std::vector<hole> element_holes(MPI_Datatype type);

/// Zeroes the holes of packed data of whole elements of `type` (a partial
/// last element up to where it ends).
void clear_holes(char* packed, std::size_t bytes, MPI_Datatype type);

/// XXH3 of packed data of `type` with its holes zeroed (on a copy; the
/// data itself when there are none).
std::uint64_t hash_significant(const char* packed, std::size_t bytes, MPI_Datatype type);

}  // namespace rampart::replica::detail
