#pragma once
// The store's messages between ranks: a fixed head, a list of id ranges, then
// block bytes. Every field is checked on arrival (wire.cpp, fuzzed by
// tests/fuzz); a message that does not parse is counted and dropped.

#include <rampart/comm/wire_result.hpp>
#include <rampart/store/store.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace rampart::store::detail {

enum class kind : std::uint32_t {
    put = 1,    // copies of blocks for the receiver to hold; answered by ack
    ack = 2,    // the put with this request number is held
    get = 3,    // send me these blocks; answered by a service reply to the request number (the blocks)
    data = 4,   // of a get whose blocks are not all here: which of its ranges are, and their blocks
    done = 5,   // the sender's part of operation `op` is over; of a submit ("stored"): every copy it
                // sent is held, `total` is the version's size it declared, `request` its part_flags,
                // the ranges the ids it submitted
    ready = 6,  // of a submit: the sender knows every rank's part and they fit; it commits
    outcome = 7,  // to a replacement: `op` is the last operation ended on the sender, `version` the
                  // newest complete version then, of `total` blocks
};

struct head {
    std::uint32_t magic = magic_value;
    kind what = kind::put;
    std::uint64_t op = 0;       // the collective operation, counted alike on every rank
    std::uint64_t request = 0;  // put/get number on the sender, echoed in answers
    std::uint64_t version = 0;
    std::uint64_t total = 0;                                  // put, done: blocks in the version
    std::uint64_t ranges = 0;                                 // id ranges that follow the head
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

/// The message at `offset` of `size` bytes at `data` (after the engine's
/// service prefix), checked for its kind: its ranges end below 2^64; a put's
/// payload is the blocks of its ranges, of `block_bytes` each; a get and a
/// done carry no payload; an ack, a ready and a data message no ranges (a
/// data message's payload is checked by decode_data, which knows the get).
comm::wire_result<decoded> decode(const char* data, std::size_t size, std::size_t offset, std::size_t block_bytes);

/// The payload of a data message that answers a get of parts of `counts`
/// blocks: a byte per part (1: here, 0: not), zeros up to a multiple of 8,
/// then the blocks of the parts that are here, in order. Which parts are.
comm::wire_result<std::vector<char>> decode_data(const char* payload, std::size_t bytes,
                                                 const std::vector<std::uint64_t>& counts, std::size_t block_bytes);
/// The bytes of decode_data's flags, before the blocks.
inline std::size_t data_flags_bytes(std::size_t parts) { return (parts + 7) / 8 * 8; }

}  // namespace rampart::store::detail
