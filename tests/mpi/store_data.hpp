#pragma once
// The bytes every store test submits: block `id` of the test's data, the same
// on every rank, so that any rank can check what it loads.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace store_test {

inline std::uint8_t byte_of(std::uint64_t id, std::size_t j, std::uint64_t salt = 0) {
    std::uint64_t x = (id * 0x9e3779b97f4a7c15ULL) ^ (j * 0xbf58476d1ce4e5b9ULL) ^ (salt * 0x94d049bb133111ebULL);
    x ^= x >> 31;
    return static_cast<std::uint8_t>(x * 0xff51afd7ed558ccdULL >> 56);
}

inline std::vector<std::byte> blocks(std::uint64_t first, std::uint64_t count, std::size_t block_bytes,
                                     std::uint64_t salt = 0) {
    std::vector<std::byte> out(count * block_bytes);
    for (std::uint64_t i = 0; i < count; ++i)
        for (std::size_t j = 0; j < block_bytes; ++j)
            out[i * block_bytes + j] = static_cast<std::byte>(byte_of(first + i, j, salt));
    return out;
}

}  // namespace store_test
