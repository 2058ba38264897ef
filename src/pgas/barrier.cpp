// rampart::pgas::barrier: the service's fault-tolerant hypercube barrier.

#include <rampart/pgas/barrier.hpp>

#include "pgas_service.hpp"

namespace rampart::pgas {

void barrier() { detail::pgas_service::get().barrier(); }

}  // namespace rampart::pgas
