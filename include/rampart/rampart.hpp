#pragma once
// The whole public API of rampart: every layer that is built (the layers
// that need MPI when the library was built with it).
//
//     #include <rampart/rampart.hpp>
//     int main() {
//         rampart::runtime rt;
//         auto f = rampart::async_replay(3, [] { return 6 * 7; });
//         return f.get() == 42 ? 0 : 1;
//     }

#include <rampart/task/async.hpp>
#include <rampart/task/config.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/dataflow.hpp>
#include <rampart/task/errors.hpp>
#include <rampart/task/executor.hpp>
#include <rampart/task/finish.hpp>
#include <rampart/task/future.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/when_all.hpp>

#include <rampart/resilience/await_check.hpp>
#include <rampart/resilience/errors.hpp>
#include <rampart/resilience/executors.hpp>
#include <rampart/resilience/fault_injection.hpp>
#include <rampart/resilience/replay.hpp>
#include <rampart/resilience/replicate.hpp>
#include <rampart/resilience/this_task.hpp>
#include <rampart/resilience/vote.hpp>

#include <rampart/store/data_loss_simulation.hpp>
#include <rampart/store/placement.hpp>

#if RAMPART_WITH_MPI
#include <rampart/comm/comm.hpp>
#include <rampart/comm/counters.hpp>
#include <rampart/comm/errors.hpp>
#include <rampart/comm/serialization.hpp>
#include <rampart/comm/service.hpp>
#include <rampart/comm/wire_result.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/checkpoint.hpp>
#include <rampart/store/store.hpp>
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/barrier.hpp>
#include <rampart/pgas/distribution.hpp>
#include <rampart/pgas/errors.hpp>
#include <rampart/pgas/failures.hpp>
#include <rampart/pgas/task_pool.hpp>
#endif
