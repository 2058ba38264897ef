#pragma once
// What each replica sees of the world outside MPI: its standard input and
// its working directory. Replicas of one rank run the same program, so
// without care they read one input once between them and write the same
// files over each other.

#include <string>

namespace rampart::replica::detail {

/// rampart-run's copy of its standard input (RAMPART_STDIN) goes to every
/// replica of rank 0 (mpiexec would give the real one to one process only);
/// the other ranks get none, as natively.
void take_standard_input(int rank);

/// With rampart-run --replica-dirs (RAMPART_REPLICA_DIRS): replica k >= 1
/// works in DIR/replica-k, which rampart-run filled with links to the
/// launch directory's entries, so that the files it writes are its own.
/// Returns why it could not, or an empty string.
std::string enter_working_directory(int replica);

}  // namespace rampart::replica::detail
