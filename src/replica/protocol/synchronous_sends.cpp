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
    // The receiver may have taken it from a sibling of this process already.
    auto& early = early_matches_[static_cast<std::size_t>(op->dest)];
    auto [first, last] = early.equal_range(op->number);
    for (auto it = first; it != last; ++it) op->matched_by.push_back(it->second);
    early.erase(first, last);
    if (!matched_everywhere(*op)) awaiting_match_[static_cast<std::size_t>(op->dest)][op->number] = op;
}

void protocol::apply_matched(int from, std::uint64_t number) {
    const int j = layout_.rank_of(from);
    if (j < 0) return;
    auto& waiting = awaiting_match_[static_cast<std::size_t>(j)];
    auto it = waiting.find(number);
    if (it == waiting.end()) {
        if (number >= next_number_[static_cast<std::size_t>(j)])
            early_matches_[static_cast<std::size_t>(j)].emplace(number, from);
        return;
    }
    // Every report is kept: the replica waited for may die, and its sibling's may have come first.
    it->second->matched_by.push_back(from);
    if (matched_everywhere(*it->second)) waiting.erase(it);
}

int protocol::partner(int rank) const {
    if (layout_.alive(rank, replica_)) return layout_.process(rank, replica_);
    for (int l = 0; l < layout_.replicas(); ++l)
        if (layout_.alive(rank, l)) return layout_.process(rank, l);
    return -1;
}

bool protocol::matched_everywhere(send_op& op) {
    if (!op.matched) {
        const int p = partner(op.dest);  // a dead receiver's place: its lowest live sibling
        op.matched = p < 0 || std::find(op.matched_by.begin(), op.matched_by.end(), p) != op.matched_by.end();
        if (op.matched) op.matched_by = {};
    }
    return op.matched;
}

void protocol::tell_matched(const inbound& in) {
    for (int l = 0; l < layout_.replicas(); ++l)
        if (const int p = layout_.process(in.source, l); !layout_.dead(p)) send_control(p, matched_tag, in.number);
}

}  // namespace rampart::replica::detail
