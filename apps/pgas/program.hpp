#pragma once
// What the array programs share: who prints (the lowest living rank), the
// checksum of a whole array, and the closing lines.

#include <rampart/comm/comm.hpp>
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/failures.hpp>

#include "../common/hex.hpp"

#include <nlohmann/json.hpp>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace rampart::apps {

/// Whether this rank is the lowest living one (the one that prints).
inline bool prints() {
    const auto dead = pgas::dead_ranks();
    int lowest = 0;
    while (std::binary_search(dead.begin(), dead.end(), lowest)) ++lowest;
    return comm::rank() == lowest;
}

/// XXH3 of the array's elements in row-major order, as 16 hex digits.
template <class T>
std::string checksum(const pgas::array<T>& a) {
    const auto v = a.get(a.layout().whole()).get();
    return hex64(XXH3_64bits(v.data(), v.size() * sizeof(T)));
}

/// The last lines: a human one, then (with --json) one JSON object.
inline void finish(const std::string& line, const nlohmann::ordered_json& result, bool json) {
    std::printf("%s\n", line.c_str());
    if (json) std::printf("%s\n", result.dump().c_str());
    std::fflush(stdout);
}

}  // namespace rampart::apps
