// The messages of the arrays' message path (see message_format.hpp).

#include "message_format.hpp"

#include <cstring>

namespace rampart::pgas::detail {

namespace {

struct fixed {
    std::uint32_t what, op;
    std::uint64_t uid;
    std::int32_t block, caller, hint;
    std::uint32_t status;
    std::uint64_t seq, low, version;
    std::int64_t region[4];
    std::uint64_t lengths[4];  // operand, result, data, records
};

}  // namespace

std::vector<char> encode_message(const message& m) {
    fixed f{static_cast<std::uint32_t>(m.what), static_cast<std::uint32_t>(m.op), m.uid, m.block, m.caller, m.hint,
            m.status, m.seq, m.low, m.version, {m.region[0], m.region[1], m.region[2], m.region[3]},
            {m.operand.size(), m.result.size(), m.data.size(), m.records.size()}};
    std::vector<char> out(sizeof f + m.operand.size() + m.result.size() + m.data.size() + m.records.size());
    std::memcpy(out.data(), &f, sizeof f);
    std::size_t at = sizeof f;
    for (const auto* part : {&m.operand, &m.result, &m.data, &m.records}) {
        if (!part->empty()) std::memcpy(out.data() + at, part->data(), part->size());
        at += part->size();
    }
    return out;
}

comm::wire_result<message> decode_message(const char* data, std::size_t size) {
    using result = comm::wire_result<message>;
    fixed f{};
    if (size < sizeof f) return result::refused("truncated array operation");
    std::memcpy(&f, data, sizeof f);
    if (f.what < 1 || f.what > 8) return result::refused("unknown array message");
    if (f.op < 1 || f.op > 4) return result::refused("unknown array operation");
    std::uint64_t total = sizeof f;
    for (auto n : f.lengths) {
        if (n > size) return result::refused("array message longer than its bytes");
        total += n;
    }
    if (total != size) return result::refused("array message of the wrong length");
    message m;
    m.what = static_cast<message_kind>(f.what);
    m.op = static_cast<op_kind>(f.op);
    m.uid = f.uid;
    m.block = f.block;
    m.caller = f.caller;
    m.hint = f.hint;
    m.status = f.status;
    m.seq = f.seq;
    m.low = f.low;
    m.version = f.version;
    for (int i = 0; i < 4; ++i) m.region[static_cast<std::size_t>(i)] = f.region[i];
    std::size_t at = sizeof f;
    std::vector<char>* parts[] = {&m.operand, &m.result, &m.data, &m.records};
    for (int i = 0; i < 4; ++i) {
        parts[i]->assign(data + at, data + at + f.lengths[i]);
        at += f.lengths[i];
    }
    return m;
}

}  // namespace rampart::pgas::detail
