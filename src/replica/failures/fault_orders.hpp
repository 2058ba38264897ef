#pragma once
// Faults ordered by the launcher (RAMPART_KILL), for tests and
// demonstrations: a replica of a rank dies by SIGKILL at a given moment.
//
//   RAMPART_KILL=R.K@WHEN[,R.K@WHEN...]   replica K of logical rank R
//   WHEN: start       right after MPI_Init, before its first message
//         1.5s        that long after MPI_Init
//         sendN       as it starts its N-th message (counted from 1; the
//                     messages of collectives count too)
//         afterN      just after its N-th message left for its receivers
//                     (a large one is then on its way)
//         recreate    in the spare that re-creates replica K of rank R,
//                     once it has the survivor's state (before it resumes);
//                     recreateN: in the N-th spare to re-create it
//         state       as it is about to send its state to a spare that
//                     re-creates a sibling (it is the elected survivor)

#include <string>
#include <vector>

namespace rampart::replica::detail {

struct kill_order {
    int rank = 0, replica = 0;
    enum class when { start, seconds, send, after, recreate, state } at = when::start;
    double seconds = 0;
    long message = 0;
};

/// Throws std::runtime_error naming a malformed order.
std::vector<kill_order> parse_kill_orders(const std::string& text);

/// The orders for this process: started at MPI_Init, consulted per message.
class fault_orders {
public:
    void start(int rank, int replica, int process);
    void before_message(long n) const;  // n counts from 1
    void after_message(long n) const;
    /// This process is about to send its state to a spare.
    void sending_state() const;
    /// This spare has the state of replica `replica` of `rank`, which it
    /// re-creates for the `nth` time (counted from 1).
    void recreating(int rank, int replica, int nth, int process) const;

private:
    std::vector<kill_order> mine_;
    int process_ = 0;
};

/// Dies by SIGKILL now, leaving a note for the report (RAMPART_REPORT).
[[noreturn]] void die_by_order(int process, const char* why);

}  // namespace rampart::replica::detail
