#pragma once
// Which cores each replica set gets on a node that holds processes of
// several sets and has fewer cores than processes (one machine, or a few
// nodes, running a replicated job).
//
// Why: the replicas of a set depend on each other's messages at every
// step, the sets only loosely (acknowledgements). Left to the scheduler,
// the processes of both sets mix on every core, and a process that waits
// for a message of its own set keeps losing the core to the other set's
// processes: Jacobi at R = 2 on two cores took 1.16 times two native jobs
// at once; with each set on a core of its own, 1.00 times. This is the
// placement of a job over several nodes (replica k of every rank together,
// the replicas of one rank apart), kept on one node.

#include <vector>

namespace rampart::replica::detail {

/// `set_of`: the replica set (replica index) of each process of the node,
/// -1 for a spare; `cpus`: the cores (logical CPUs, as Linux numbers them)
/// the node's processes may use. Returns the cores of each process, empty
/// for "leave it where it is".
///
/// Each set gets cores of its own, in proportion to its processes on the
/// node (rounded down, at least one); the cores left over are shared by
/// every set. Spares stay where they are. Nothing moves when the node has a
/// core per process, holds one set only, or has fewer cores than sets.
///
///     set_cores({0, 0, 1, 1}, {0, 1})  ->  {{0}, {0}, {1}, {1}}
std::vector<std::vector<int>> set_cores(const std::vector<int>& set_of, const std::vector<int>& cpus);

class layout;

/// At MPI_Init, on every process (collective): the processes of each node
/// tell each other their set and cores, and this process's thread moves to
/// its set's cores. MPI's own threads, started before, stay where they are.
/// Does nothing if MPI fails meanwhile: placement only speeds the job up.
void bind_to_set_cores(const layout& where, int process);
/// The cores this process's thread may run on now (for its report).
std::vector<int> current_cores();
/// A spare that became a replica of set `replica` moves to that set's cores
/// (when that set has processes on the spare's node).
void move_to_set_cores(int replica);

}  // namespace rampart::replica::detail
