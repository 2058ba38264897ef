#include "nodes.hpp"

#include <mpi.h>
#include <mpi-ext.h>
#include <sched.h>

#include <cstdint>
#include <functional>
#include <string>

namespace rampart::replica::detail {

namespace {
struct process_place {
    std::uint64_t host = 0;
    cpu_set_t cpus;  // where it may run
};
static_assert(sizeof(process_place) == sizeof(std::uint64_t) + sizeof(cpu_set_t), "sent as bytes: no padding");

std::vector<process_place>& places() {
    static auto* all = new std::vector<process_place>();
    return *all;
}
bool oversubscribed = true;  // until known otherwise: yielding is never wrong, only slower

// More processes on this node than the cores they may use between them.
bool more_processes_than_cores(int process) {
    const auto& all = places();
    cpu_set_t cores;
    CPU_ZERO(&cores);
    int processes = 0;
    for (const auto& p : all) {
        if (p.host != all[static_cast<std::size_t>(process)].host) continue;
        ++processes;
        CPU_OR(&cores, &cores, &p.cpus);
    }
    return processes > CPU_COUNT(&cores);
}
}  // namespace

// Under ULFM a gathering may succeed on some processes and fail on others:
// all agree, and without it every process counts as a node of its own.
void learn_nodes() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    PMPI_Get_processor_name(name, &length);
    process_place mine{};
    mine.host = std::hash<std::string>{}(std::string(name, static_cast<std::size_t>(length)));
    CPU_ZERO(&mine.cpus);
    sched_getaffinity(0, sizeof mine.cpus, &mine.cpus);  // on failure: no core, as if oversubscribed
    int size = 0, process = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &process);
    auto& all = places();
    all.assign(static_cast<std::size_t>(size), process_place{});
    int gathered = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD) ==
                   MPI_SUCCESS;
    PMPIX_Comm_agree(MPI_COMM_WORLD, &gathered);
    if (!gathered) {
        for (int p = 0; p < size; ++p) all[static_cast<std::size_t>(p)].host = static_cast<std::uint64_t>(p);
        return;
    }
    oversubscribed = more_processes_than_cores(process);
}

// Replica 0 of rank r started as process r (layout.hpp).
int node_of_rank(int rank) {
    const auto& all = places();
    for (int r = 0; r <= rank; ++r)
        if (all[static_cast<std::size_t>(r)].host == all[static_cast<std::size_t>(rank)].host) return r;
    return rank;
}

bool node_oversubscribed() { return oversubscribed; }

}  // namespace rampart::replica::detail
