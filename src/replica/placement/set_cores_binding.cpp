// Binding this process to its replica set's cores (set_cores.hpp), from
// what the processes of its node tell each other at MPI_Init.

#include "layout.hpp"
#include "set_cores.hpp"

#include <mpi.h>
#include <mpi-ext.h>
#include <sched.h>

#include <cstdint>
#include <map>
#include <vector>

namespace rampart::replica::detail {

namespace {
std::map<int, std::vector<int>>& cores_of_sets() {
    // Never destroyed: a spare may ask while the process exits.
    static auto* cores = new std::map<int, std::vector<int>>();
    return *cores;
}

void bind_to(const std::vector<int>& cores) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int c : cores) CPU_SET(c, &mask);
    sched_setaffinity(0, sizeof mask, &mask);  // a refusal leaves the process where it was
}

std::vector<int> listed(const cpu_set_t& mask) {
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) out.push_back(c);
    return out;
}

struct node_entry {
    std::int64_t process = -1;  // -1: an entry MPI left unwritten (a dead member's)
    cpu_set_t cpus;
};
static_assert(sizeof(node_entry) == sizeof(std::int64_t) + sizeof(cpu_set_t), "sent as bytes: no padding");

// Every process learns whether every process of the job has its node's
// communicator: under ULFM a split may succeed on some processes and fail
// on others, and those that went on would leave the others waiting.
bool node_communicator(int process, MPI_Comm* node) {
    int made = PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, process, MPI_INFO_NULL, node) ==
               MPI_SUCCESS;
    PMPIX_Comm_agree(MPI_COMM_WORLD, &made);
    if (!made && *node != MPI_COMM_NULL) PMPI_Comm_free(node);
    if (made) PMPI_Comm_set_errhandler(*node, MPI_ERRORS_RETURN);
    return made != 0;
}
}  // namespace

void bind_to_set_cores(const layout& where, int process) {
    MPI_Comm node = MPI_COMM_NULL;
    if (where.replicas() < 2 || !node_communicator(process, &node)) return;
    int size = 0;
    PMPI_Comm_size(node, &size);
    node_entry mine{};
    mine.process = process;
    sched_getaffinity(0, sizeof mine.cpus, &mine.cpus);  // on failure: no core, as if this process had none
    std::vector<node_entry> all(static_cast<std::size_t>(size));
    const int rc = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
    PMPI_Comm_free(&node);
    if (rc != MPI_SUCCESS) return;
    std::erase_if(all, [](const node_entry& e) { return e.process < 0; });

    cpu_set_t any;
    CPU_ZERO(&any);
    std::vector<int> set_of;
    for (auto& e : all) {
        CPU_OR(&any, &any, &e.cpus);
        const int p = static_cast<int>(e.process);
        set_of.push_back(where.rank_of(p) >= 0 ? where.replica_of(p) : -1);
    }
    const auto plan = set_cores(set_of, listed(any));
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (plan[i].empty()) continue;
        cores_of_sets()[set_of[i]] = plan[i];
        if (all[i].process == process) bind_to(plan[i]);
    }
}

std::vector<int> current_cores() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);  // on failure: none listed
    return listed(mask);
}

void move_to_set_cores(int replica) {
    const auto found = cores_of_sets().find(replica);
    if (found != cores_of_sets().end()) bind_to(found->second);
}

}  // namespace rampart::replica::detail
