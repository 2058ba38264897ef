#pragma once
// The builds of the message hash (hash_kernel.cpp, once per instruction
// set), for hashing.cpp to choose among and for their tests.

#include <cstddef>
#include <cstdint>

namespace rampart::replica::detail {

#define RAMPART_HASH_KERNEL(isa)                                                                 \
    std::uint64_t hash_with_##isa(const void* data, std::size_t bytes);                          \
    std::uint64_t hash_in_pieces_with_##isa(const void* data, std::size_t bytes, std::size_t piece, \
                                            void (*between)(void*), void* context);
RAMPART_HASH_KERNEL(baseline)  // the compiler's default instruction set (SSE2 on x86-64)
#if defined(__x86_64__)
RAMPART_HASH_KERNEL(avx2)
RAMPART_HASH_KERNEL(avx512)
#endif
#undef RAMPART_HASH_KERNEL

}  // namespace rampart::replica::detail
