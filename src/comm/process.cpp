// Public calls about this process's communication.

#include <rampart/comm/comm.hpp>
#include <rampart/comm/counters.hpp>
#include <rampart/comm/detail/engine.hpp>

#include <cstdlib>

namespace rampart::comm {

// mpiexec (through PMIx) gives every process it starts these variables.
bool distributed() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr; }

engine_counters counters() { return detail::engine::get().counters(); }

}  // namespace rampart::comm
