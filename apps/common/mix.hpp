#pragma once
// How the programs make their input from a seed: splitmix64's finaliser, so
// that any rank can make any element from (seed, index) alone.

#include <cstdint>

namespace rampart::apps {

inline std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace rampart::apps
