// Crashes: MPI (ULFM) tells of a dead process through an error; the
// protocol learns which processes died, and every survivor adapts on its
// own, without a message: receivers take the dead replica's rank's
// messages from its next live replica, senders stop waiting for the dead
// receiver's acknowledgements, and the replica elected to send for the dead
// one sends what it may not have delivered.

#include "protocol.hpp"

#include "report.hpp"
#include "set_collectives.hpp"


namespace rampart::replica::detail {

// Any error may mean a dead process (some report MPI_ERR_OTHER): MPI is
// asked which processes it knows to be dead. Acknowledging them lets
// receives from any source work again.
bool protocol::check_failures(int /*rc*/) {
    const std::vector<int> out = net_->failed();
    bool any = false;
    for (int p : out)
        if (p >= 0 && !layout_.dead(p)) {
            on_death(p);
            any = true;
        }
    return any;
}

void protocol::on_death(int p) {
    // What it sent before it died is still to be taken, its "done" among it.
    for (;;) {
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (net_->improbe(p, MPI_ANY_TAG, &flag, &msg, &st) != MPI_SUCCESS || !flag) break;
        on_message(msg, st);
    }
    // A message of it that did not arrive whole has learnt of the death
    // already (lost_in_flight), and handled it.
    if (layout_.dead(p)) return;
    std::vector<int> responsible_before(static_cast<std::size_t>(layout_.replicas()));
    for (int k = 0; k < layout_.replicas() && rank_ >= 0; ++k)  // a spare sends for nobody
        responsible_before[static_cast<std::size_t>(k)] = layout_.responsible(rank_, k);
    layout_.mark_dead(p);
    any_death_ = true;
    ++replicas_lost;
    report_death(*this, p);
    stash_[static_cast<std::size_t>(p)].clear();
    if (p == coordination_.spare && !coordination_.go) forget_recreation();
    const int r = layout_.rank_of(p), k = layout_.replica_of(p);
    if (r < 0) return;  // a spare
    if (layout_.live_replicas(r) == 0 && !rank_ended(r)) lost_every_replica(r);
    pending_[static_cast<std::size_t>(r)].for_each([&](const std::shared_ptr<send_op>& op) {
        send_op::copy& c = op->to[static_cast<std::size_t>(k)];
        if (c.s == send_op::state::awaiting_ack || c.s == send_op::state::sending) c.s = send_op::state::not_needed;
    });
    if (source_process_[static_cast<std::size_t>(r)] == p) switch_source(r);
    if (r == rank_)
        for (int j = 0; j < layout_.replicas(); ++j)
            if (responsible_before[static_cast<std::size_t>(j)] != replica_ &&
                layout_.responsible(rank_, j) == replica_)
                take_over(j);
    if (r == rank_) check_votes();  // fewer replicas to agree
    if (k == replica_) own_set_broken_ = true;
    if (k == replica_ && collectives_ordered()) tell_entered_with_everyone();
    set_collectives::get().on_death(p);
    for (auto& ops : pending_)
        for (auto& op : ops.list()) finish(*op);
}

bool protocol::rank_ended(int rank) const {
    for (int k = 0; k < layout_.replicas(); ++k)
        if (done_from_[static_cast<std::size_t>(layout_.process(rank, k))]) return true;
    return false;
}

void protocol::lost_every_replica(int rank) {
    std::string processes;
    for (int k = 0; k < layout_.replicas(); ++k)
        processes += (k ? ", " : "") + std::to_string(layout_.process(rank, k));
    abort_job(
        5, "rank " + std::to_string(rank) + " lost every replica (processes " + processes + "): the job cannot go on");
}

// The rank's messages come from its next live replica from now on; what the
// dead one had on its way here is settled first (received, or a hole that
// the new source fills).
void protocol::switch_source(int rank) {
    settle_receives_from(source_process_[static_cast<std::size_t>(rank)]);
    const int k = layout_.responsible(rank, replica_);
    if (k < 0) return;
    const int q = layout_.process(rank, k);
    source_process_[static_cast<std::size_t>(rank)] = q;
    replay_stash(q);
}

void protocol::settle_receives_from(int process) {
    for (const auto& in : receiving_) {
        if (in->source_process != process || in->s != inbound::state::receiving) continue;
        const int rc = net_->wait(&in->request);
        if (rc == MPI_SUCCESS)
            received(in);
        else
            lost_in_flight(in, rc);
    }
}

}  // namespace rampart::replica::detail
