#pragma once
// What the plain MPI programs share: a checksum of their result and the
// line that reports it. They use nothing of rampart: process replication
// runs them unchanged.

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace mpi_programs {

/// MPI started: this process's rank and the number of ranks.
struct world {
    int rank = 0, size = 1;
};
inline world start(int& argc, char**& argv) {
    MPI_Init(&argc, &argv);
    world w;
    MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.size);
    return w;
}

/// FNV-1a over bytes, continued from `h`: the same bytes give the same sum.
inline std::uint64_t checksum(const void* data, std::size_t bytes, std::uint64_t h = 1469598103934665603ull) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

inline std::string hex(std::uint64_t v) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

/// On rank 0: "name: checksum <hex>, <what>" or, with json, the fields as one object.
inline void report(bool json, const char* name, std::uint64_t sum, nlohmann::ordered_json fields) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    fields["checksum"] = hex(sum);
    if (json) {
        fields["program"] = name;
        std::printf("%s\n", fields.dump().c_str());
    } else {
        std::printf("%s: checksum %s\n", name, hex(sum).c_str());
    }
    std::fflush(stdout);
}

}  // namespace mpi_programs
