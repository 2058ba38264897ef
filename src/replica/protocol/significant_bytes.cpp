// The bytes of a message that hold its values (see significant_bytes.hpp):
// the holes of a datatype, worked out from its type map.

#include "significant_bytes.hpp"

#include "hashing.hpp"
#include "type_facts.hpp"

#include <algorithm>
#include <cfloat>
#include <cstring>

namespace rampart::replica::detail {

namespace {

// x87's 80-bit extended format in 16 bytes: the value is the first 10.
constexpr bool x87_long_double = sizeof(long double) == 16 && LDBL_MANT_DIG == 64;
constexpr std::size_t long_double_value = 10, long_double_bytes = 16;

std::size_t size_of(MPI_Datatype t) {
    int size = 0;
    PMPI_Type_size(t, &size);
    return size > 0 ? static_cast<std::size_t>(size) : 0;
}

bool named(MPI_Datatype t) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

// The predefined types that hold long doubles: each long double's unused
// bytes (MPI_LONG_DOUBLE_INT packs the long double, then the int).
std::vector<hole> named_holes(MPI_Datatype t) {
    if (!x87_long_double) return {};
    const hole first{long_double_value, long_double_bytes - long_double_value};
    if (t == MPI_LONG_DOUBLE || t == MPI_LONG_DOUBLE_INT) return {first};
    bool complex = t == MPI_C_LONG_DOUBLE_COMPLEX;
#ifdef MPI_CXX_LONG_DOUBLE_COMPLEX
    complex = complex || t == MPI_CXX_LONG_DOUBLE_COMPLEX;
#endif
    if (complex) return {first, {long_double_bytes + long_double_value, long_double_bytes - long_double_value}};
    return {};
}

// How many elements of its (first) old type a derived type's element holds,
// from its constructor's arguments.
std::int64_t repeats(int combiner, const std::vector<int>& ints, MPI_Datatype self, MPI_Datatype old) {
    switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED: return 1;
        case MPI_COMBINER_CONTIGUOUS: return ints.at(0);
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_HINDEXED_BLOCK: return std::int64_t{ints.at(0)} * ints.at(1);
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED: {
            std::int64_t n = 0;
            for (int i = 0; i < ints.at(0); ++i) n += ints.at(static_cast<std::size_t>(1 + i));
            return n;
        }
        default: {  // subarray, darray and the rest: as many as fit its size
            const std::size_t one = size_of(old);
            return one > 0 ? static_cast<std::int64_t>(size_of(self) / one) : 0;
        }
    }
}

// `n` elements of `sub` from `at` on.
void append(std::vector<hole>& out, std::size_t& at, MPI_Datatype sub, std::int64_t n) {
    const auto inner = holes_of(sub);
    const std::size_t size = size_of(sub);
    if (inner.empty() || n <= 0) {
        at += size * static_cast<std::size_t>(std::max<std::int64_t>(n, 0));
        return;
    }
    for (std::int64_t i = 0; i < n; ++i, at += size)
        for (const hole& h : inner) out.push_back({at + h.at, h.bytes});
}

}  // namespace

std::vector<hole> element_holes(MPI_Datatype t) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return named_holes(t);
    std::vector<int> ints(static_cast<std::size_t>(ni));
    std::vector<MPI_Aint> aints(static_cast<std::size_t>(na));
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
    PMPI_Type_get_contents(t, ni, na, nd, ints.data(), aints.data(), types.data());
    std::vector<hole> out;
    std::size_t at = 0;
    if (combiner == MPI_COMBINER_STRUCT) {
        for (int i = 0; i < ints.at(0); ++i)
            append(out, at, types.at(static_cast<std::size_t>(i)), ints.at(static_cast<std::size_t>(1 + i)));
    } else if (!types.empty()) {
        append(out, at, types[0], repeats(combiner, ints, t, types[0]));
    }
    for (MPI_Datatype& d : types)
        if (!named(d)) PMPI_Type_free(&d);
    return out;
}

const std::vector<hole>& holes_of(MPI_Datatype type) { return facts_of(type).holes; }

void clear_holes(char* packed, std::size_t bytes, MPI_Datatype type) {
    const type_facts& facts = facts_of(type);
    const auto& holes = facts.holes;
    const std::size_t size = facts.size;
    if (holes.empty() || size == 0) return;
    for (std::size_t element = 0; element < bytes; element += size)
        for (const hole& h : holes) {
            if (element + h.at >= bytes) break;
            std::memset(packed + element + h.at, 0, std::min(h.bytes, bytes - element - h.at));
        }
}

std::uint64_t hash_significant(const char* packed, std::size_t bytes, MPI_Datatype type) {
    if (holes_of(type).empty()) return hash_bytes(packed, bytes);
    std::vector<char> copy(packed, packed + bytes);
    clear_holes(copy.data(), copy.size(), type);
    return hash_bytes(copy.data(), copy.size());
}

}  // namespace rampart::replica::detail
