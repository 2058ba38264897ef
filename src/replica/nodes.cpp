#include "nodes.hpp"

#include <mpi.h>
#include <mpi-ext.h>

#include <cstdint>
#include <functional>
#include <string>

namespace rampart::replica::detail {

namespace {
std::vector<std::uint64_t>& host_of_process() {
    static auto* hosts = new std::vector<std::uint64_t>();
    return *hosts;
}
}  // namespace

// Under ULFM a gathering may succeed on some processes and fail on others:
// all agree, and without it every process counts as a node of its own.
void learn_nodes() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    PMPI_Get_processor_name(name, &length);
    const std::uint64_t mine = std::hash<std::string>{}(std::string(name, static_cast<std::size_t>(length)));
    int size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    auto& hosts = host_of_process();
    hosts.assign(static_cast<std::size_t>(size), 0);
    int gathered = PMPI_Allgather(&mine, 1, MPI_UINT64_T, hosts.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD) == MPI_SUCCESS;
    PMPIX_Comm_agree(MPI_COMM_WORLD, &gathered);
    if (!gathered)
        for (int p = 0; p < size; ++p) hosts[static_cast<std::size_t>(p)] = static_cast<std::uint64_t>(p);
}

// Replica 0 of rank r started as process r (layout.hpp).
int node_of_rank(int rank) {
    const auto& hosts = host_of_process();
    for (int r = 0; r <= rank; ++r)
        if (hosts[static_cast<std::size_t>(r)] == hosts[static_cast<std::size_t>(rank)]) return r;
    return rank;
}

}  // namespace rampart::replica::detail
