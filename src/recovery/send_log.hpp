#pragma once
// What a rank has sent, kept so that it can be sent again after a crash: to
// the spare that replaces a dead rank (which starts from the beginning, or
// from a checkpoint, and asks for what it lacks), and to survivors whose copy
// was lost in flight. The payloads are the ones MPI sent from, shared, never
// copied.
//
// Each (destination, tag) channel holds the messages with sequence numbers
// [base, next) without gaps. The base is 0 for a channel that a process uses
// from its start; a replacement restored from a checkpoint starts its
// channels at the checkpoint's counts (start_at); a checkpoint that every
// rank has committed lets trim() move the base up and free the messages below.

#include <rampart/comm/serialization.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <utility>

namespace rampart::recovery::detail {

struct logged_message {
    comm::detail::envelope env;
    comm::detail::outgoing_payload payload;
};

class send_log {
public:
    /// Keeps a sent message. Its sequence must be the channel's next: the
    /// channel's base for its first message (0 unless start_at set it), then
    /// one more each time. Throws std::logic_error otherwise.
    void record(const comm::detail::envelope& env, const comm::detail::outgoing_payload& payload);

    /// The channel to `dest` with `tag`, never used yet, starts at `base`:
    /// its first message will have that sequence. Throws std::logic_error if
    /// the channel has logged a message or has a base already.
    void start_at(int dest, int tag, std::uint64_t base);

    /// Drops the messages to `dest` with `tag` whose sequence is below
    /// `upto`; the channel's base becomes `upto` (a smaller `upto` changes
    /// nothing). Returns how many messages it dropped. Throws
    /// std::invalid_argument if `upto` is beyond the channel's next sequence
    /// (messages not sent cannot be dropped).
    std::uint64_t trim(int dest, int tag, std::uint64_t upto);

    /// The lowest sequence the channel still holds (or will hold: its next
    /// when it is empty), and the sequence of its next message. 0 and 0 for a
    /// channel never used.
    std::uint64_t base(int dest, int tag) const;
    std::uint64_t next(int dest, int tag) const;

    /// Calls f(message) for every logged message to `dest` whose sequence is
    /// at least `received(tag)`, channel by channel in sequence order.
    /// Messages below a channel's base are gone: a receiver that asks for
    /// them gets the channel from its base (the engine reports the gap).
    template <class Received, class F>
    void for_each_unreceived(int dest, Received&& received, F&& f) const {
        for (auto it = channels_.lower_bound({dest, 0}); it != channels_.end() && it->first.first == dest; ++it) {
            const channel& ch = it->second;
            std::uint64_t from = received(it->first.second);
            if (from < ch.base) from = ch.base;
            for (std::uint64_t s = from; s < ch.base + ch.messages.size(); ++s)
                f(ch.messages[static_cast<std::size_t>(s - ch.base)]);
        }
    }

    /// What the log holds now: bytes (envelopes and payloads) and messages.
    std::uint64_t bytes() const noexcept { return bytes_; }
    std::uint64_t messages() const noexcept { return messages_; }
    /// What trim() has dropped so far.
    std::uint64_t trimmed_bytes() const noexcept { return trimmed_bytes_; }
    std::uint64_t trimmed_messages() const noexcept { return trimmed_messages_; }

private:
    struct channel {
        std::uint64_t base = 0;               // sequence of messages.front()
        std::deque<logged_message> messages;  // [base, base + size)
    };
    std::map<std::pair<int, int>, channel> channels_;  // (dest, tag)
    std::uint64_t bytes_ = 0;
    std::uint64_t messages_ = 0;
    std::uint64_t trimmed_bytes_ = 0;
    std::uint64_t trimmed_messages_ = 0;
};

}  // namespace rampart::recovery::detail
