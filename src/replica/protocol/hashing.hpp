#pragma once
// The 64-bit XXH3 hash that replicas compare their messages by.

#include <cstddef>
#include <cstdint>

namespace rampart::replica::detail {

std::uint64_t hash_bytes(const void* data, std::size_t bytes);
/// The same hash, calling `between(context)` after every `piece` bytes
/// (0: the whole as one piece).
std::uint64_t hash_bytes_in_pieces(const void* data, std::size_t bytes, std::size_t piece, void (*between)(void*),
                                   void* context);

}  // namespace rampart::replica::detail
