// The hash of the messages, with the widest vector instructions the
// processor has (hash_kernel.cpp is built once for each).

#include "hashing.hpp"

#include "hash_kernels.hpp"

namespace rampart::replica::detail {

namespace {
struct kernel {
    std::uint64_t (*whole)(const void*, std::size_t);
    std::uint64_t (*in_pieces)(const void*, std::size_t, std::size_t, void (*)(void*), void*);
};

kernel pick() {
#if defined(__x86_64__)
    // Also checks that the operating system saves the wider registers.
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return {hash_with_avx512, hash_in_pieces_with_avx512};
    if (__builtin_cpu_supports("avx2")) return {hash_with_avx2, hash_in_pieces_with_avx2};
#endif
    return {hash_with_baseline, hash_in_pieces_with_baseline};
}

const kernel& chosen() {
    static const kernel k = pick();
    return k;
}
}  // namespace

std::uint64_t hash_bytes(const void* data, std::size_t bytes) { return chosen().whole(data, bytes); }

std::uint64_t hash_bytes_in_pieces(const void* data, std::size_t bytes, std::size_t piece, void (*between)(void*),
                                   void* context) {
    return chosen().in_pieces(data, bytes, piece, between, context);
}

}  // namespace rampart::replica::detail
