#pragma once
// Hooks for layers built on the runtime. The communication engine uses them
// to start MPI with the runtime, to end the whole job when the program fails
// on one rank, and to shut down before the runtime does. A program has no
// need of them.

#include <exception>
#include <functional>

namespace rampart {

/// Called by each runtime once its workers run (one hook; a later call
/// replaces it). The engine starts MPI here under mpiexec, so that a spare
/// rank waits in the runtime's constructor until it replaces a crashed rank.
///
///     [[maybe_unused]] const bool set = (rampart::set_runtime_start_hook(&start_mpi), true);
void set_runtime_start_hook(void (*hook)());

/// Called when a runtime is destroyed, telling whether an exception leaves
/// its scope (the program failed on this rank).
void set_runtime_end_hook(void (*hook)(bool exception_in_flight));

/// Called when a resilient task fails for good (its replays or replicas
/// exhausted), with the failure.
void set_task_failure_hook(void (*hook)(std::exception_ptr));

/// Runs `f` when the live runtime shuts down, after every task has finished;
/// later registrations run first. Throws std::logic_error when no runtime
/// is alive.
///
///     rampart::at_runtime_shutdown([] { stop_my_thread(); });
void at_runtime_shutdown(std::function<void()> f);

namespace detail {
/// Calls the task failure hook, if one is set.
void task_failed_for_good(const std::exception_ptr& cause);
}  // namespace detail

}  // namespace rampart
