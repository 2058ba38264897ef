#pragma once

#include <rampart/task/detail/scheduler.hpp>

#include <memory>
#include <utility>

namespace rampart {

namespace detail {
/// Called by each runtime once its workers run. The comm layer sets it, when
/// it is linked in, to start MPI under mpiexec: a spare rank then waits in the
/// runtime's constructor until it replaces a crashed rank.
void set_runtime_start_hook(void (*hook)());
}  // namespace detail

/// The rampart runtime of this process: a oneTBB arena with `threads` worker
/// threads, one of which is the thread that waits (usually main). Exactly one
/// may exist at a time; its destructor waits for every task. Under mpiexec,
/// a program that uses rampart::comm starts MPI here.
///
///     int main() {
///         rampart::runtime rt;          // all cores, or RAMPART_THREADS
///         auto f = rampart::async([] { return 42; });
///         return f.get() == 42 ? 0 : 1;
///     }
class runtime {
public:
    /// threads == 0 takes RAMPART_THREADS, or else every core.
    explicit runtime(int threads = 0);
    ~runtime();
    runtime(const runtime&) = delete;
    runtime& operator=(const runtime&) = delete;

    int threads() const noexcept;

    /// Runs f on the calling thread as a member of the arena, so that the tasks
    /// it spawns go to its local queue and its waits run other tasks.
    template <class F>
    decltype(auto) run(F&& f) {
        return sched_->execute(std::forward<F>(f));
    }

private:
    std::unique_ptr<detail::scheduler> sched_;
};

}  // namespace rampart
