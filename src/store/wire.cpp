// The store's decoders (wire.hpp). Nothing read from a message is trusted
// before it is checked against the bytes that are there: a range or a block
// count that wraps around 2^64 would make the holder keep (and later send)
// blocks past the end of the message.

#include "wire.hpp"

#include <limits>

namespace rampart::store::detail {

namespace {

using comm::wire_result;
constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();

const char* kind_name(kind k) {
    switch (k) {
        case kind::put:
            return "put";
        case kind::ack:
            return "ack";
        case kind::get:
            return "get";
        case kind::data:
            return "data";
        case kind::done:
            return "done";
        case kind::ready:
            return "ready";
        case kind::outcome:
            return "outcome";
    }
    return "?";
}

// "" when the payload fits the kind.
std::string check_kind(const decoded& d, std::size_t block_bytes) {
    const std::string name = kind_name(d.h.what);
    switch (d.h.what) {
        case kind::put: {
            std::uint64_t blocks = 0;
            for (const id_range& r : d.ranges) {
                if (r.count > max_u64 - blocks) return "a put of more than 2^64 blocks";
                blocks += r.count;
            }
            if (block_bytes == 0 || blocks > d.payload_bytes / block_bytes || blocks * block_bytes != d.payload_bytes)
                return "a put of " + std::to_string(blocks) + " blocks of " + std::to_string(block_bytes) +
                       " bytes with " + std::to_string(d.payload_bytes) + " payload bytes";
            return "";
        }
        case kind::get:
        case kind::done:
            return d.payload_bytes == 0 ? ""
                                        : "a " + name + " with " + std::to_string(d.payload_bytes) + " payload bytes";
        case kind::data:
            return d.ranges.empty() ? "" : "a data message with ranges";
        case kind::ack:
        case kind::ready:
        case kind::outcome:
            return d.ranges.empty() && d.payload_bytes == 0 ? "" : "an " + name + " with ranges or payload";
    }
    return "kind " + std::to_string(static_cast<std::uint32_t>(d.h.what));
}

}  // namespace

wire_result<decoded> decode(const char* data, std::size_t size, std::size_t offset, std::size_t block_bytes) {
    using result = wire_result<decoded>;
    decoded d;
    if (size < offset || size - offset < sizeof(head))
        return result::refused("store message of " + std::to_string(size) + " bytes, less than its head");
    std::memcpy(&d.h, data + offset, sizeof(head));
    if (d.h.magic != head::magic_value) return result::refused("not a store message");
    if (d.h.what < kind::put || d.h.what > kind::outcome)
        return result::refused("store message of kind " + std::to_string(static_cast<std::uint32_t>(d.h.what)));
    const std::size_t left = size - offset - sizeof(head);
    if (d.h.ranges > left / sizeof(id_range))
        return result::refused("store message announces " + std::to_string(d.h.ranges) + " ranges in " +
                               std::to_string(left) + " bytes");
    d.ranges.resize(static_cast<std::size_t>(d.h.ranges));
    if (d.h.ranges) std::memcpy(d.ranges.data(), data + offset + sizeof(head), d.ranges.size() * sizeof(id_range));
    for (std::size_t i = 0; i < d.ranges.size(); ++i)
        if (d.ranges[i].count > max_u64 - d.ranges[i].first)
            return result::refused("range " + std::to_string(i) + " ends past 2^64");
    d.payload_offset = offset + sizeof(head) + d.ranges.size() * sizeof(id_range);
    d.payload_bytes = size - d.payload_offset;
    if (std::string why = check_kind(d, block_bytes); !why.empty()) return result::refused(why);
    return d;
}

wire_result<std::vector<char>> decode_data(const char* payload, std::size_t bytes,
                                           const std::vector<std::uint64_t>& counts, std::size_t block_bytes) {
    using result = wire_result<std::vector<char>>;
    const std::size_t flags = data_flags_bytes(counts.size());
    if (bytes < flags)
        return result::refused("data message of " + std::to_string(bytes) + " bytes, less than its " +
                               std::to_string(flags) + " flag bytes");
    std::vector<char> here(counts.size());
    std::uint64_t want = 0;
    for (std::size_t i = 0; i < flags; ++i) {
        const char f = payload[i];
        if (f != 0 && (f != 1 || i >= counts.size()))
            return result::refused("data message flag " + std::to_string(i) + " is " + std::to_string(int(f)));
        if (f == 0) continue;
        here[i] = 1;
        if (block_bytes == 0 || counts[i] > (max_u64 - want) / block_bytes)
            return result::refused("data message of more than 2^64 bytes");
        want += counts[i] * block_bytes;
    }
    if (bytes - flags != want)
        return result::refused("data message with " + std::to_string(bytes - flags) + " block bytes, " +
                               std::to_string(want) + " expected");
    return here;
}

}  // namespace rampart::store::detail
