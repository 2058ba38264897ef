#pragma once
// How the programs print checksums: 16 lower-case hex digits.

#include <cstdint>
#include <cstdio>
#include <string>

namespace rampart::apps {

inline std::string hex64(std::uint64_t v) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(v));
    return hex;
}

}  // namespace rampart::apps
