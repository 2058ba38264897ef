// The message hash: every instruction set's build of it gives xxHash's own
// XXH3, whole and in pieces, so replicas on different processors agree.
#include "../../src/replica/protocol/hash_kernels.hpp"
#include "../../src/replica/protocol/hashing.hpp"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <random>
#include <vector>

namespace rd = rampart::replica::detail;

namespace {
struct kernel {
    const char* isa;
    std::uint64_t (*whole)(const void*, std::size_t);
    std::uint64_t (*in_pieces)(const void*, std::size_t, std::size_t, void (*)(void*), void*);
};

// The builds this processor runs; the ones it cannot are named on stdout.
std::vector<kernel> kernels_here() {
    std::vector<kernel> k{{"baseline", rd::hash_with_baseline, rd::hash_in_pieces_with_baseline}};
#if defined(__x86_64__)
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2"), avx512 = __builtin_cpu_supports("avx512f");
    if (avx2) k.push_back({"avx2", rd::hash_with_avx2, rd::hash_in_pieces_with_avx2});
    if (avx512) k.push_back({"avx512f", rd::hash_with_avx512, rd::hash_in_pieces_with_avx512});
    if (!avx2 || !avx512) std::printf("not tested: this processor lacks AVX2 or AVX-512\n");
#endif
    return k;
}

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 random(seed);
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(random());
    return v;
}

void count_call(void* calls) { ++*static_cast<int*>(calls); }
}  // namespace

TEST(ReplicaHashing, EveryInstructionSetGivesXxh3) {
    const std::size_t sizes[] = {0, 1, 3, 16, 17, 128, 129, 240, 241, 1024, 28000, 65536, 1 << 20};
    for (const kernel& k : kernels_here()) {
        for (std::size_t n : sizes) {
            const auto data = random_bytes(n, static_cast<unsigned>(n));
            EXPECT_EQ(k.whole(data.data(), n), XXH3_64bits(data.data(), n)) << k.isa << ", " << n << " bytes";
        }
    }
}

TEST(ReplicaHashing, InPiecesIsTheSameHash) {
    const auto data = random_bytes(1000003, 7);
    for (const kernel& k : kernels_here()) {
        int calls = 0;
        EXPECT_EQ(k.in_pieces(data.data(), data.size(), 65536, count_call, &calls), XXH3_64bits(data.data(), data.size()))
            << k.isa;
        EXPECT_EQ(calls, 16) << k.isa;  // one after every piece, the short last one too
    }
}

TEST(ReplicaHashing, TheChosenOneIsXxh3) {
    const auto data = random_bytes(100000, 3);
    EXPECT_EQ(rd::hash_bytes(data.data(), data.size()), XXH3_64bits(data.data(), data.size()));
    int calls = 0;
    EXPECT_EQ(rd::hash_bytes_in_pieces(data.data(), data.size(), 4096, count_call, &calls),
              XXH3_64bits(data.data(), data.size()));
}
