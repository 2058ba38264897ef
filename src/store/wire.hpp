#pragma once
// The store's messages between ranks: a fixed head, a list of id ranges, then
// block bytes. Every field is checked on arrival; a message that does not
// parse is counted and dropped.

#include <rampart/store/store.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace rampart::store::detail {

enum class kind : std::uint32_t {
    put = 1,      // copies of blocks for the receiver to hold; answered by ack
    ack = 2,      // the put with this request number is held
    get = 3,      // send me these blocks; answered by a service reply to the request number (the blocks)
    data = 4,     // of a get whose blocks are not all here: which of its ranges are, and their blocks
    done = 5,     // the sender's part of operation `op` is over; of a submit ("stored"): every copy it
                  // sent is held, `total` is the version's size it declared, `request` its part_flags,
                  // the ranges the ids it submitted
    ready = 6,    // of a submit: the sender knows every rank's part and they fit; it commits
};

struct head {
    std::uint32_t magic = magic_value;
    kind what = kind::put;
    std::uint64_t op = 0;       // the collective operation, counted alike on every rank
    std::uint64_t request = 0;  // put/get number on the sender, echoed in answers
    std::uint64_t version = 0;
    std::uint64_t total = 0;    // put, done: blocks in the version
    std::uint64_t ranges = 0;   // id ranges that follow the head
    static constexpr std::uint32_t magic_value = 0x52535452;  // "RTSR"
};

inline std::vector<char> encode(const head& h, const std::vector<id_range>& ranges = {}) {
    head copy = h;
    copy.ranges = ranges.size();
    std::vector<char> out(sizeof(head) + ranges.size() * sizeof(id_range));
    std::memcpy(out.data(), &copy, sizeof(head));
    if (!ranges.empty()) std::memcpy(out.data() + sizeof(head), ranges.data(), ranges.size() * sizeof(id_range));
    return out;
}

struct decoded {
    head h;
    std::vector<id_range> ranges;
    std::size_t payload_offset = 0;  // where block bytes start
    std::size_t payload_bytes = 0;
};

inline std::optional<decoded> decode(const std::vector<char>& bytes, std::size_t offset) {
    decoded d;
    if (bytes.size() < offset || bytes.size() - offset < sizeof(head)) return std::nullopt;
    std::memcpy(&d.h, bytes.data() + offset, sizeof(head));
    if (d.h.magic != head::magic_value || d.h.what < kind::put || d.h.what > kind::ready) return std::nullopt;
    const std::size_t left = bytes.size() - offset - sizeof(head);
    if (d.h.ranges > left / sizeof(id_range)) return std::nullopt;
    d.ranges.resize(d.h.ranges);
    if (d.h.ranges) std::memcpy(d.ranges.data(), bytes.data() + offset + sizeof(head), d.h.ranges * sizeof(id_range));
    d.payload_offset = offset + sizeof(head) + d.h.ranges * sizeof(id_range);
    d.payload_bytes = bytes.size() - d.payload_offset;
    return d;
}

}  // namespace rampart::store::detail
