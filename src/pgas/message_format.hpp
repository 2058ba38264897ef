#pragma once
// The messages of the arrays' message path (message_path.hpp): one format
// for all of them, a fixed head and four byte strings. decode_message
// checks the sizes; the holder checks blocks and regions against the array.

#include <rampart/comm/wire_result.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace rampart::pgas::detail {

enum class message_kind : std::uint32_t {
    request = 1,   // caller -> primary: an operation
    forward = 2,   // primary -> shadow: an applied operation and its version
    answer = 3,    // holder -> caller: the outcome of an operation
    ack = 4,       // shadow -> primary: the versions up to `version` are applied
    copy = 5,      // primary -> new shadow: the whole copy, its version and records
    locate = 6,    // caller -> every rank: do you hold block `block`?
    located = 7,   // the answer: `status` 0 none, 1 primary, 2 shadow; `hint` the other holder
    compare = 8,   // asks a holder for its copy of a block (differing_copies)
};

enum class op_kind : std::uint32_t { put = 1, get = 2, acc = 3, read_inc = 4 };

enum class answer_status : std::uint32_t {
    ok = 0,
    not_primary = 1,  // this rank holds the shadow and its primary lives: ask `hint`
    not_here = 2,     // this rank holds no copy of the block
};

struct message {
    message_kind what = message_kind::request;
    op_kind op = op_kind::put;
    std::uint64_t uid = 0;      // the array
    std::int32_t block = -1;
    std::int32_t caller = -1;   // forward: who asked
    std::int32_t hint = -1;     // answer: a holder to ask; located: the other holder
    std::uint32_t status = 0;   // answer: answer_status; located: role
    std::uint64_t seq = 0;      // the caller's operation
    std::uint64_t low = 0;      // request: the caller's oldest operation still unanswered
    std::uint64_t version = 0;  // forward, ack, copy
    std::array<std::int64_t, 4> region{};  // rows [0], [1], columns [2], [3], relative to the block
    std::vector<char> operand;  // acc's alpha, read_inc's increment
    std::vector<char> result;   // answer: get's data or read_inc's old value; forward: read_inc's old value
    std::vector<char> data;     // put's and acc's data; copy and compare: the block
    std::vector<char> records;  // copy: the results kept for callers
};

std::vector<char> encode_message(const message& m);
/// The message in `size` bytes at `data`.
comm::wire_result<message> decode_message(const char* data, std::size_t size);

}  // namespace rampart::pgas::detail
