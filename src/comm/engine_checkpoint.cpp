// Checkpoints of the message channels (snapshot_channels, restore_channels,
// trim_send_log): a replacement resumes from a checkpoint instead of the
// start, with the channel counts of that moment, and survivors drop from
// their send logs what was sent before it.

#include "engine_impl.hpp"

#include "../recovery/channel_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace rampart::comm::detail {

namespace {

std::string channel_text(const char* side, const channel_state::count& c) {
    return std::string(side) + " rank " + std::to_string(c.peer) + " with tag " + std::to_string(c.tag);
}

}  // namespace

void engine::impl::check_state_rank(const channel_state& state, const char* what) const {
    auto bad = [what](const std::string& why) {
        return rampart::invalid_argument(std::string("rampart: engine::") + what + ": " + why);
    };
    if (state.rank != owner_.rank_)
        throw bad("the channel state is rank " + std::to_string(state.rank) + "'s, this is rank " +
                  std::to_string(owner_.rank_));
    for (auto [list, name] : {std::pair{&state.sent, "sent"}, std::pair{&state.received, "received"}}) {
        if (std::string why = recovery::detail::check_counts(*list, name); !why.empty()) throw bad(why);
        for (const auto& c : *list)
            if (c.peer >= owner_.size_ || c.tag > owner_.max_tag_)
                throw bad("`" + std::string(name) + "` names rank " + std::to_string(c.peer) + " and tag " +
                          std::to_string(c.tag) + ", out of range (" + std::to_string(owner_.size_) +
                          " ranks, tags up to " + std::to_string(owner_.max_tag_) + ")");
    }
}

void engine::impl::update_log_counters() {
    log_messages_.store(log_.messages(), std::memory_order_relaxed);
    log_bytes_.store(log_.bytes(), std::memory_order_relaxed);
    log_trimmed_.store(log_.trimmed_messages(), std::memory_order_relaxed);
}

channel_state engine::impl::snapshot() const {
    channel_state s;
    s.rank = owner_.rank_;
    for (const auto& [key, ch] : channels_) {
        if (!ch.waiting.empty())
            throw rampart::invalid_argument(
                "rampart: engine::snapshot_channels: a receive from rank " + std::to_string(key.first) + " with tag " +
                std::to_string(key.second) +
                " is posted and not delivered; take a checkpoint where the program waits for no message");
        // A message that came before its receive (ch.early) is after the
        // checkpoint for this rank: not counted, and still in its sender's log.
        if (ch.next_sequence > 0) s.received.push_back({key.first, key.second, ch.next_sequence});
    }
    for (const auto& [key, next] : next_send_sequence_)
        if (next > 0) s.sent.push_back({key.first, key.second, next});
    return s;
}

void engine::impl::restore(const channel_state& state) {
    check_state_rank(state, "restore_channels");
    // Everything is checked before anything changes.
    for (const auto& c : state.received)
        if (auto it = channels_.find({c.peer, c.tag}); it != channels_.end()) {
            const channel& ch = it->second;
            if (ch.next_sequence > 0 || !ch.waiting.empty() || ch.busy)
                throw rampart::invalid_argument("rampart: engine::restore_channels: the channel " +
                                                channel_text("from", c) +
                                                " has been received on already; restore before the program receives");
        }
    for (const auto& c : state.sent)
        if (auto it = next_send_sequence_.find({c.peer, c.tag});
            (it != next_send_sequence_.end() && it->second > 0) || log_.next(c.peer, c.tag) > 0)
            throw rampart::invalid_argument("rampart: engine::restore_channels: the channel " + channel_text("to", c) +
                                            " has been sent on already; restore before the program sends");

    std::map<int, std::vector<std::uint64_t>> told;  // per destination: (tag, next send sequence)
    for (const auto& c : state.sent) {
        next_send_sequence_[{c.peer, c.tag}] = c.messages;
        if (logging_) log_.start_at(c.peer, c.tag, c.messages);
        if (c.peer == owner_.rank_) {  // sends to itself
            channel& ch = channels_[{c.peer, c.tag}];
            ch.stream_next = std::max(ch.stream_next, c.messages);
        } else {
            told[c.peer].insert(told[c.peer].end(), {static_cast<std::uint64_t>(c.tag), c.messages});
        }
    }
    std::vector<std::string> lost;
    for (const auto& c : state.received) {
        channel& ch = channels_[{c.peer, c.tag}];
        ch.next_sequence = c.messages;
        if (ch.early && ch.early->env.sequence < c.messages) {  // a message the checkpoint holds
            ch.early.reset();
            ++duplicates_;
        }
        ch.lost_reported = ch.lost();
        if (ch.lost_reported) {
            lost.push_back(channel_text("from", c) + " (messages " + std::to_string(c.messages) + " to " +
                           std::to_string(ch.stream_next - 1) + ")");
            ++channels_lost_;
        }
    }
    // The processes of those ranks learn where this one resumes. Should a
    // recovery lose the message, exchange_and_resend tells them instead.
    for (auto& [dest, words] : told)
        if (const int p = members_->process_of(dest); p >= 0) send_control(p, control_restored, std::move(words));
    update_log_counters();
    if (!lost.empty()) {
        std::string text;
        for (const auto& l : lost) text += (text.empty() ? "" : "; ") + l;
        text =
            "rampart: engine::restore_channels: the checkpoint is older than what the survivors kept in their send "
            "logs; these messages are lost for good, and receives on their channels will fail: " +
            text;
        std::fprintf(stderr, "rampart: rank %d: %s\n", owner_.rank_, text.c_str());
        throw comm_error(text);
    }
}

void engine::impl::trim(const channel_state& upto) {
    check_state_rank(upto, "trim_send_log");
    for (const auto& c : upto.sent) {
        const auto it = next_send_sequence_.find({c.peer, c.tag});
        const std::uint64_t sent = it == next_send_sequence_.end() ? 0 : it->second;
        if (c.messages > sent)
            throw rampart::invalid_argument("rampart: engine::trim_send_log: " + std::to_string(c.messages) +
                                            " messages to rank " + std::to_string(c.peer) + " with tag " +
                                            std::to_string(c.tag) + ", but only " + std::to_string(sent) +
                                            " were sent on that channel");
    }
    if (!logging_) return;
    for (const auto& c : upto.sent) log_.trim(c.peer, c.tag, c.messages);
    update_log_counters();
}

}  // namespace rampart::comm::detail
