#pragma once

#include <rampart/task/detail/scheduler.hpp>

#include <exception>
#include <memory>
#include <utility>

namespace rampart {

/// The rampart runtime of this process: a oneTBB arena with `threads` worker
/// threads, one of which is the thread that waits (usually main). Exactly one
/// may exist at a time; its destructor waits for every task. Under mpiexec,
/// a program that uses rampart::comm starts MPI here, and the program's
/// failure on one rank ends the whole job: an exception that leaves the
/// runtime's scope, std::terminate, or exit() while the runtime lives makes
/// every other rank stop within a second; the job's exit status is then
/// this rank's (catch the exception outside the runtime's scope to print it).
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
    int uncaught_ = 0;  // exceptions in flight when it was created
};

}  // namespace rampart
