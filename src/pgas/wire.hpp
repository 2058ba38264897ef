#pragma once
// The arrays' messages between ranks: a fixed head, then a payload (the
// bytes a rank gives in a collective exchange). Every field is checked on
// arrival; a message that does not parse is counted and dropped.

#include <rampart/comm/wire_result.hpp>

#include <cstdint>
#include <vector>

namespace rampart::pgas::detail {

enum class kind : std::uint32_t {
    exchange = 1,  // this rank's part of collective exchange `key` (the payload)
    barrier = 2,   // the sender has completed the steps below `step` of barrier `key`
    array = 3,     // a message of array `key`'s message path (the payload: message_format.hpp)
};

struct head {
    std::uint32_t magic = magic_value;
    kind what = kind::exchange;
    std::uint64_t key = 0;
    std::uint32_t step = 0;
    std::uint32_t payload = 0;  // bytes that follow
    static constexpr std::uint32_t magic_value = 0x52504741;  // "RPGA"
};

std::vector<char> encode(const head& h, const std::vector<char>& payload = {});

struct decoded {
    head h;
    std::vector<char> payload;
};

/// The message at `offset` of `bytes`: its magic, a known kind, a payload
/// of the length the head says (none for a barrier step), a step below 64.
comm::wire_result<decoded> decode(const std::vector<char>& bytes, std::size_t offset);

}  // namespace rampart::pgas::detail
