#include "datatypes.hpp"

#include "significant_bytes.hpp"
#include "type_facts.hpp"

#include <algorithm>
#include <cstring>

namespace rampart::replica::detail {

std::size_t data_bytes(int count, MPI_Datatype type) {
    return static_cast<std::size_t>(count) * facts_of(type).size;
}

bool contiguous(MPI_Datatype type) { return facts_of(type).contiguous; }

std::vector<char> pack(const void* buf, int count, MPI_Datatype type) {
    int bytes = 0;
    PMPI_Pack_size(count, type, MPI_COMM_WORLD, &bytes);
    std::vector<char> out(static_cast<std::size_t>(bytes));
    int position = 0;
    PMPI_Pack(buf, count, type, out.data(), bytes, &position, MPI_COMM_WORLD);
    out.resize(static_cast<std::size_t>(position));
    return out;
}

std::uint64_t hash_data(const void* buf, int count, MPI_Datatype type, std::size_t bytes) {
    if (contiguous(type)) return hash_significant(static_cast<const char*>(buf), bytes, type);
    const std::vector<char> packed = pack(buf, count, type);
    return hash_significant(packed.data(), std::min(bytes, packed.size()), type);
}

std::uint64_t hash_data_in_pieces(const void* buf, int count, MPI_Datatype type, std::size_t bytes,
                                  void (*between)(void*), void* context) {
    constexpr std::size_t piece = 256 * 1024;
    if (bytes <= piece || !contiguous(type) || !holes_of(type).empty()) return hash_data(buf, count, type, bytes);
    return hash_bytes_in_pieces(buf, bytes, piece, between, context);
}

void unpack(const std::vector<char>& from, std::size_t bytes, void* buf, int count, MPI_Datatype type) {
    if (bytes == 0) return;
    if (contiguous(type)) {
        std::memcpy(buf, from.data(), bytes);
        return;
    }
    int size = 0;
    PMPI_Type_size(type, &size);
    const int elements = size > 0 ? static_cast<int>(bytes / static_cast<std::size_t>(size)) : 0;
    int position = 0;
    PMPI_Unpack(from.data(), static_cast<int>(bytes), &position, buf, std::min(elements, count), type, MPI_COMM_WORLD);
}

void copy_data(const void* src, int scount, MPI_Datatype stype, void* dst, int rcount, MPI_Datatype rtype) {
    if (contiguous(stype) && contiguous(rtype)) {
        const std::size_t bytes = std::min(data_bytes(scount, stype), data_bytes(rcount, rtype));
        if (bytes > 0) std::memmove(dst, src, bytes);  // a barrier's buffers are null
        return;
    }
    int bytes = 0;
    PMPI_Pack_size(scount, stype, MPI_COMM_WORLD, &bytes);
    std::vector<char> packed(static_cast<std::size_t>(bytes));
    int position = 0;
    PMPI_Pack(src, scount, stype, packed.data(), bytes, &position, MPI_COMM_WORLD);
    int out = 0;
    PMPI_Unpack(packed.data(), position, &out, dst, rcount, rtype, MPI_COMM_WORLD);
}

typed_buffer::typed_buffer(int count, MPI_Datatype type) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    const std::size_t size = count > 0 ? static_cast<std::size_t>(true_extent + (count - 1) * extent) : 0;
    bytes.resize(size);
    base = bytes.data() - true_lb;
}

typed_buffer::typed_buffer(const void* buf, int count, MPI_Datatype type) : typed_buffer(count, type) {
    copy_data(buf, count, type, base, count, type);
}

}  // namespace rampart::replica::detail
