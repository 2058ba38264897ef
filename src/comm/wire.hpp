#pragma once
// The engine's decoders of bytes from other processes, and the encoders they
// mirror: plain functions of bytes, so that each can be fuzzed on its own
// (tests/fuzz). Each checks every field it reads and returns the value or why
// it refused the bytes; the engine counts a refusal as a malformed message
// and drops it. They never trust a length or a count they read: every size
// is checked against the bytes that are there before anything is copied.

#include <rampart/comm/serialization.hpp>
#include <rampart/comm/wire_result.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rampart::comm::detail {

// The engine's own messages between processes (envelope kind control_kind,
// their meaning in the sequence field).
inline constexpr std::uint16_t control_kind = 3;
// The sender's program has ended; its payload is the logical rank it sent
// the counts for, then pairs (tag, messages sent) of its channels to the
// receiver: nothing more will come on them.
inline constexpr std::uint64_t control_done = 1;
// A replacement restored from a checkpoint: its payload is pairs (tag, next
// send sequence) of its channels to the receiver.
inline constexpr std::uint64_t control_restored = 2;
// The sender's program failed: the receiver stops at once and answers
// control_stopped; the sender ends only then, so that no spare replaces it.
// Both are an envelope alone.
inline constexpr std::uint64_t control_failed = 3;
inline constexpr std::uint64_t control_stopped = 4;

/// A program message: `head_bytes` bytes at `head` (its envelope, unless the
/// message was shorter) and `payload_bytes` payload bytes after them. The
/// envelope, or what is wrong with it (the text of the message_error).
wire_result<envelope> check_envelope(const void* head, std::size_t head_bytes, std::size_t payload_bytes);

/// A control message, checked: its envelope and its payload as words.
struct control_message {
    envelope env;
    std::vector<std::uint64_t> words;
};
envelope control_envelope(int source, std::uint64_t what, std::size_t payload_bytes);
/// The whole message (envelope and payload) from a job of `ranks` logical
/// ranks whose program tags end at `max_tag`.
wire_result<control_message> decode_control(const void* data, std::size_t bytes, int ranks, int max_tag);

/// What one process tells another at a recovery: the channels from the
/// receiver and how many of their messages it holds, and the channels to the
/// receiver with the first message its send log keeps and the next it sends.
struct channel_counts {
    struct held_channel {
        int tag = 0;
        std::uint64_t messages = 0;
        friend bool operator==(const held_channel&, const held_channel&) = default;
    };
    struct sending_channel {
        int tag = 0;
        std::uint64_t base = 0, next = 0;
        friend bool operator==(const sending_channel&, const sending_channel&) = default;
    };
    std::vector<held_channel> held;
    std::vector<sending_channel> sending;
    friend bool operator==(const channel_counts&, const channel_counts&) = default;
};
/// As words: k, k pairs (tag, held), then triples (tag, base, next).
void append_channel_counts(std::vector<std::uint64_t>& out, const channel_counts& c);
/// `n` words (n > 0; an idle spare sends none).
wire_result<channel_counts> decode_channel_counts(const std::uint64_t* words, std::size_t n, int max_tag);

/// The recovery state of one service of one process.
struct service_state {
    int number = 0;
    std::vector<char> bytes;
    friend bool operator==(const service_state&, const service_state&) = default;
};
/// As bytes: entries (u32 service number, u32 bytes, the bytes).
void append_service_state(std::vector<char>& out, int number, const std::vector<char>& state);
wire_result<std::vector<service_state>> decode_service_states(const char* data, std::size_t bytes);

// Every service message starts with this prefix: magic, service number (u32).
inline constexpr std::uint32_t service_magic = 0x53565243;  // "CRVS"
inline constexpr std::size_t service_prefix = 8;
void write_service_prefix(char* out, int number);
/// The service number of a service message.
wire_result<int> decode_service_prefix(const char* data, std::size_t bytes);

}  // namespace rampart::comm::detail
