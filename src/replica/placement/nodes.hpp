#pragma once
// Which node each process of the job started on, learnt once at MPI_Init,
// so that every replica of a rank answers "which ranks share my node" the
// same way (MPI_Comm_split_type): a rank is where its first replica started;
// and whether the node has a core for each of its processes.

#include <vector>

namespace rampart::replica::detail {

/// At MPI_Init, on every process: gathers the host of every process.
void learn_nodes();
/// The node of a logical rank: the lowest logical rank on the same node.
int node_of_rank(int rank);
/// Whether this process's node runs more processes of the job than the
/// cores they may use (as MPI_Init found them): then a process waiting for
/// a message gives its core away, else it spins, as MPI itself does.
bool node_oversubscribed();

}  // namespace rampart::replica::detail
