#pragma once
// What the layer needs to know of a datatype for every message (its size,
// whether its elements lie back to back, the bytes that hold no value),
// worked out once per type: asking MPI each time cost more than the rest
// of a small message's handling. Predefined types are kept in a table for
// the whole run; a derived type keeps its facts as an attribute, which MPI
// deletes with the type.

#include "significant_bytes.hpp"

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace rampart::replica::detail {

struct type_facts {
    std::size_t size = 0;     // bytes of data in one element (MPI_Type_size)
    bool contiguous = false;  // elements lie one after the other with no gap, from the buffer on
    std::vector<hole> holes;  // of one packed element (significant_bytes.hpp)
};

/// The facts of `type`; MPI_DATATYPE_NULL has size 0 and no holes.
///
///     facts_of(MPI_INT).size == 4
const type_facts& facts_of(MPI_Datatype type);

}  // namespace rampart::replica::detail
