// XXH3 compiled for one instruction set (RAMPART_HASH_ISA: baseline, avx2
// or avx512, with the matching -m flags); hashing.cpp picks one at run time.
// Every replica hashes every message it sends and receives, and the
// packaged xxHash is built for SSE2 only: AVX-512 hashes about 4x faster.
// The hash is the same on every instruction set. This file includes
// nothing with external linkage but its own functions, so no code built
// for a wider instruction set can stand in for another file's.

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cstddef>
#include <cstdint>

#define RAMPART_CONCAT2(a, b) a##b
#define RAMPART_CONCAT(a, b) RAMPART_CONCAT2(a, b)
#define RAMPART_HASH_NAME(name) RAMPART_CONCAT(name##_, RAMPART_HASH_ISA)

namespace rampart::replica::detail {

std::uint64_t RAMPART_HASH_NAME(hash_with)(const void* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

std::uint64_t RAMPART_HASH_NAME(hash_in_pieces_with)(const void* data, std::size_t bytes, std::size_t piece,
                                                     void (*between)(void*), void* context) {
    if (piece == 0) piece = bytes;  // one piece
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    for (std::size_t at = 0; at < bytes; at += piece) {
        XXH3_64bits_update(&state, static_cast<const char*>(data) + at, bytes - at < piece ? bytes - at : piece);
        between(context);
    }
    return XXH3_64bits_digest(&state);
}

}  // namespace rampart::replica::detail
