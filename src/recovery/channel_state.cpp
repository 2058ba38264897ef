// The byte form of a rank's channel counts, kept in checkpoints: a header
// (magic, version, rank, list sizes) and 16-byte entries, checked field by
// field when read back, since the bytes come from the store.

#include <rampart/recovery/recovery.hpp>
#include <rampart/task/errors.hpp>

#include "channel_state.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace rampart::recovery {

namespace detail {

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

}  // namespace detail

namespace {

constexpr std::uint32_t state_magic = 0x53484352;  // "RCHS"
constexpr std::uint16_t state_version = 1;
constexpr std::size_t state_header = 32;  // magic, version, reserved, rank, reserved, sent, received
constexpr std::size_t state_entry = 16;   // peer, tag, messages

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
        if (std::string why = detail::check_counts(*list, name); !why.empty()) throw bad(why);
    return s;
}

}  // namespace rampart::recovery
