// The library's blocking collectives order the program's messages after a
// crash too (collective_order.hpp): each process counts the collectives it
// shares with every rank, and the members of a broken replica set tell each
// other, and the replicas that send in the place of their dead members, how
// far they are.

#include "protocol.hpp"

#include "communicators.hpp"
#include "set_collectives.hpp"

namespace rampart::replica::detail {

// Not with spares: a re-created replica runs the program's set-up again
// and cannot say how far its set was; the order is then not kept (a limit,
// docs/replica.md), as in the sets' own collectives.
bool protocol::collectives_ordered() const { return layout_.replicas() >= 2 && layout_.spares() == 0; }

void protocol::collective_entered(const communicator& c) {
    if (!collectives_ordered()) return;
    order_.entered(c.ranks);
    if (!own_set_broken_) return;
    for (int r : c.ranks)
        if (r != rank_) tell_entered_with(r);
}

// In a broken set, the collective's data may have come from the other set:
// the program goes on once the live members of its own set have entered it.
void protocol::collective_passed(const communicator& c) {
    if (!collectives_ordered()) return;
    order_.passed(c.ranks);
    if (!own_set_broken_) return;
    wait_until([&] {
        for (int r : c.ranks) {
            const int q = layout_.process(r, replica_);
            if (r != rank_ && !layout_.dead(q) && !order_.has_entered(q, order_.entered_with(r))) return false;
        }
        return true;
    });
}

// How many collectives shared with `rank` this process has entered: to
// that rank's replica in this set, or where it is dead, to the live
// replicas of `rank`, one of which sends to this process in its place.
void protocol::tell_entered_with(int rank) {
    const std::uint64_t count = order_.entered_with(rank);
    if (layout_.alive(rank, replica_)) return send_control(layout_.process(rank, replica_), entered_with_tag, count);
    for (int k = 0; k < layout_.replicas(); ++k)
        if (layout_.alive(rank, k)) send_control(layout_.process(rank, k), entered_with_tag, count);
}

// A member of this set died: every other member and substitute learns how
// far this process is, since it may have entered its last collectives
// before it knew.
void protocol::tell_entered_with_everyone() {
    for (int r = 0; r < layout_.ranks(); ++r)
        if (r != rank_ && order_.entered_with(r) > 0) tell_entered_with(r);
}

// A copy in the place of a dead sibling goes once its receiver has entered
// the collectives that this process had passed before the message: those
// in the sets on the world, and the library's shared with the receiver.
bool protocol::may_send_copy(const send_op& op, int process) const {
    return set_collectives::get().may_send(process, op.collectives_passed) &&
           order_.has_entered(process, op.passed_with_dest);
}

}  // namespace rampart::replica::detail
