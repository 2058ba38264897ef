// Checkpoints of the message channels (snapshot_channels, restore_channels,
// trim_send_log): a replacement resumes from a checkpoint instead of the
// start, with the channel counts of that moment, and survivors drop from
// their send logs what was sent before it. The counts travel as bytes
// (channel_state::to_bytes) that are checked field by field when read back.

#include "engine_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace rampart::comm::detail {

namespace {

constexpr std::uint32_t state_magic = 0x53484352;  // "RCHS"
constexpr std::uint16_t state_version = 1;
constexpr std::size_t state_header = 32;  // magic, version, reserved, rank, reserved, sent, received
constexpr std::size_t state_entry = 16;   // peer, tag, messages

std::string channel_text(const char* side, const channel_state::count& c) {
    return std::string(side) + " rank " + std::to_string(c.peer) + " with tag " + std::to_string(c.tag);
}

// Sorted by (peer, tag) without repeats, ranks and tags not negative: "" or
// what is wrong.
std::string check_counts(const std::vector<channel_state::count>& v, const char* list) {
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i].peer < 0 || v[i].tag < 0)
            return std::string("entry ") + std::to_string(i) + " of `" + list + "` has rank " +
                   std::to_string(v[i].peer) + " and tag " + std::to_string(v[i].tag);
        if (i > 0 && std::pair(v[i - 1].peer, v[i - 1].tag) >= std::pair(v[i].peer, v[i].tag))
            return std::string("`") + list + "` is not sorted by (rank, tag) without repeats at entry " +
                   std::to_string(i);
    }
    return {};
}

template <class T>
void put(std::vector<char>& out, std::size_t& at, T v) {
    std::memcpy(out.data() + at, &v, sizeof v);
    at += sizeof v;
}

template <class T>
T take(const char* in, std::size_t& at) {
    T v;
    std::memcpy(&v, in + at, sizeof v);
    at += sizeof v;
    return v;
}

}  // namespace

std::vector<char> channel_state::to_bytes() const {
    std::vector<char> out(state_header + state_entry * (sent.size() + received.size()));
    std::size_t at = 0;
    put(out, at, state_magic);
    put(out, at, state_version);
    put(out, at, std::uint16_t{0});
    put(out, at, rank);
    put(out, at, std::uint32_t{0});
    put(out, at, static_cast<std::uint64_t>(sent.size()));
    put(out, at, static_cast<std::uint64_t>(received.size()));
    for (const auto* list : {&sent, &received})
        for (const count& c : *list) {
            put(out, at, c.peer);
            put(out, at, c.tag);
            put(out, at, c.messages);
        }
    return out;
}

channel_state channel_state::from_bytes(const void* data, std::size_t bytes) {
    auto bad = [](const std::string& why) {
        return rampart::invalid_argument("rampart: channel_state::from_bytes: " + why);
    };
    if (bytes < state_header)
        throw bad(std::to_string(bytes) + " bytes, less than the " + std::to_string(state_header) + "-byte header");
    if (data == nullptr) throw bad("no data");
    const char* in = static_cast<const char*>(data);
    std::size_t at = 0;
    if (take<std::uint32_t>(in, at) != state_magic) throw bad("not a channel state (wrong magic number)");
    if (const auto v = take<std::uint16_t>(in, at); v != state_version)
        throw bad("version " + std::to_string(v) + ", this build reads version " + std::to_string(state_version));
    const auto reserved1 = take<std::uint16_t>(in, at);
    channel_state s;
    s.rank = take<std::int32_t>(in, at);
    const auto reserved2 = take<std::uint32_t>(in, at);
    if (reserved1 != 0 || reserved2 != 0) throw bad("reserved header fields are not zero");
    if (s.rank < 0) throw bad("rank " + std::to_string(s.rank));
    const auto n_sent = take<std::uint64_t>(in, at), n_received = take<std::uint64_t>(in, at);
    const std::size_t room = (bytes - state_header) / state_entry;
    if (n_sent > room || n_received > room - n_sent || (bytes - state_header) % state_entry != 0 ||
        n_sent + n_received != room)
        throw bad(std::to_string(bytes) + " bytes do not hold the header and " + std::to_string(n_sent) + " + " +
                  std::to_string(n_received) + " entries of " + std::to_string(state_entry) + " bytes");
    for (auto [list, n] : {std::pair{&s.sent, n_sent}, std::pair{&s.received, n_received}}) {
        list->resize(static_cast<std::size_t>(n));
        for (count& c : *list) {
            c.peer = take<std::int32_t>(in, at);
            c.tag = take<std::int32_t>(in, at);
            c.messages = take<std::uint64_t>(in, at);
        }
    }
    for (auto [list, name] : {std::pair{&s.sent, "sent"}, std::pair{&s.received, "received"}})
        if (std::string why = check_counts(*list, name); !why.empty()) throw bad(why);
    return s;
}

void engine::impl::check_state_rank(const channel_state& state, const char* what) const {
    auto bad = [what](const std::string& why) {
        return rampart::invalid_argument(std::string("rampart: engine::") + what + ": " + why);
    };
    if (state.rank != owner_.rank_)
        throw bad("the channel state is rank " + std::to_string(state.rank) + "'s, this is rank " +
                  std::to_string(owner_.rank_));
    for (auto [list, name] : {std::pair{&state.sent, "sent"}, std::pair{&state.received, "received"}}) {
        if (std::string why = check_counts(*list, name); !why.empty()) throw bad(why);
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
            throw rampart::invalid_argument("rampart: engine::restore_channels: the channel " +
                                            channel_text("to", c) +
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
        text = "rampart: engine::restore_channels: the checkpoint is older than what the survivors kept in their send "
               "logs; these messages are lost for good, and receives on their channels will fail: " + text;
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
