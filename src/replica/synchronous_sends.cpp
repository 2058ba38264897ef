// Synchronous sends (MPI_Ssend, MPI_Issend): the program's request
// completes only once the program of the receiver has taken the message.
// The layer takes messages from MPI on its own, so MPI's synchronous mode
// alone would complete it as soon as the receiving layer has the message,
// before the program's receive. The message carries a bit in its tag; the
// receiving process, when it gives the message to its program, tells every
// live replica of the sender. Replica k of the sender waits for replica k
// of the receiver (the lowest live one once that is dead): a program that
// sends to itself then sees its send complete exactly when MPI would, on
// every replica, and the replicas take the same paths.

#include "protocol.hpp"

#include <algorithm>

namespace rampart::replica::detail {

void protocol::await_match(const std::shared_ptr<send_op>& op) {
    op->awaiting_match.push_back(partner(op->dest));
    // The receiver may have taken it from a sibling of this process already.
    auto& early = early_matches_[static_cast<std::size_t>(op->dest)];
    auto [first, last] = early.equal_range(op->number);
    for (auto it = first; it != last; ++it) std::erase(op->awaiting_match, it->second);
    early.erase(first, last);
    if (!op->awaiting_match.empty()) awaiting_match_[static_cast<std::size_t>(op->dest)][op->number] = op;
}

void protocol::apply_matched(int from, std::uint64_t number) {
    const int j = layout_.rank_of(from);
    if (j < 0) return;
    auto& waiting = awaiting_match_[static_cast<std::size_t>(j)];
    auto it = waiting.find(number);
    if (it == waiting.end()) {
        if (number >= next_number_[static_cast<std::size_t>(j)]) early_matches_[static_cast<std::size_t>(j)].emplace(number, from);
        return;
    }
    std::erase(it->second->awaiting_match, from);
    if (it->second->awaiting_match.empty()) waiting.erase(it);
}

int protocol::partner(int rank) const {
    if (layout_.alive(rank, replica_)) return layout_.process(rank, replica_);
    for (int l = 0; l < layout_.replicas(); ++l)
        if (layout_.alive(rank, l)) return layout_.process(rank, l);
    return -1;
}

bool protocol::matched_everywhere(send_op& op) {
    // A dead receiver's place: its lowest live sibling takes the message too.
    for (int& p : op.awaiting_match)
        if (p >= 0 && layout_.dead(p)) p = partner(op.dest);
    std::erase(op.awaiting_match, -1);
    if (!op.awaiting_match.empty()) return false;
    awaiting_match_[static_cast<std::size_t>(op.dest)].erase(op.number);
    return true;
}

void protocol::tell_matched(const inbound& in) {
    for (int l = 0; l < layout_.replicas(); ++l)
        if (const int p = layout_.process(in.source, l); !layout_.dead(p)) send_control(p, matched_tag, in.number);
}

}  // namespace rampart::replica::detail
