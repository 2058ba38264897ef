#pragma once
// The barrier's messages on one node: a mailbox per rank in shared memory,
// one word per (step, sender) holding the last barrier the sender has told
// it of. Posting is a store into the receiver's mailbox and hearing a load
// from one's own: no engine thread on the way, so that a barrier step costs
// what a cache line takes to move between cores, as MPI's own barrier on
// shared memory. Messages are never lost (a recovery does not touch them),
// and a store into a dead rank's mailbox harms no one.

#include "shared_segment.hpp"

#include <cstdint>
#include <vector>

namespace rampart::pgas::detail {

class barrier_mailboxes {
public:
    static constexpr int max_steps = 64;

    /// Creates this rank's mailbox, before the others learn its process id.
    barrier_mailboxes(int me, int p);
    /// Maps the mailboxes of the ranks with a process id (0: dead).
    void connect(const std::vector<std::int64_t>& pids);
    /// Removes this rank's name, once every rank has mapped it.
    void forget_name();
    /// Removes the name of a dead rank's mailbox, which it may have left.
    void forget_name_of(int rank);

    /// Tells `dest` that this rank has completed the steps below `step` of
    /// barrier `seq`.
    void post(int dest, int step, std::uint64_t seq);
    /// Whether `source` told this rank so for `step` of barrier `seq` (or of
    /// a later barrier, which implies it).
    bool heard(int step, int source, std::uint64_t seq) const;

private:
    std::uint64_t* slot(char* base, int step, int source) const;

    int me_, p_;
    std::vector<shared_segment> boxes_;  // by rank; unmapped for the dead
    std::vector<std::int64_t> pids_;
    bool named_ = true;
};

}  // namespace rampart::pgas::detail
