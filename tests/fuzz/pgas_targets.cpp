// Fuzz targets of the arrays' decoders: the head of every array message
// (src/pgas/wire.hpp) and the messages of the message path
// (src/pgas/message_format.hpp).

#include "targets.hpp"

#include "../../src/pgas/message_format.hpp"
#include "../../src/pgas/wire.hpp"

#include <string>

namespace rampart::fuzz {

namespace {

using namespace rampart::pgas::detail;

// A service's bytes come at an offset, after the engine's own prefix.
constexpr std::size_t head_offset = 12;

target head_target() {
    target t{"pgas_head", {}, {}};
    const std::vector<std::pair<head, bytes>> heads = {
        {{head::magic_value, kind::exchange, 3, 0, 0}, {1, 2, 3}},
        {{head::magic_value, kind::barrier, 9, 5, 0}, {}},
        {{head::magic_value, kind::array, 4, 0, 0}, bytes(40, 'm')}};
    for (const auto& [h, payload] : heads) {
        bytes b(head_offset, 'p');
        const bytes m = encode(h, payload);
        b.insert(b.end(), m.begin(), m.end());
        t.seeds.push_back(b);
    }
    t.decode = [heads](const char* data, std::size_t size, int expected, std::string& why) {
        const auto d = decode(bytes(data, data + size), head_offset);
        if (!d) {
            why = d.why();
            return verdict::refused;
        }
        if (d->payload.size() != d->h.payload) {
            why = "a payload of another length than the head says";
            return verdict::wrong;
        }
        if (expected >= 0 && (d->payload != heads[static_cast<std::size_t>(expected)].second ||
                              d->h.key != heads[static_cast<std::size_t>(expected)].first.key)) {
            why = "the message changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

target message_target() {
    target t{"pgas_message", {}, {}};
    message put;
    put.op = op_kind::put;
    put.uid = 7;
    put.block = 2;
    put.seq = 41;
    put.low = 40;
    put.region = {0, 2, 1, 3};
    put.data = bytes(32, 'd');
    message forward = put;
    forward.what = message_kind::forward;
    forward.op = op_kind::read_inc;
    forward.version = 9;
    forward.caller = 1;
    forward.operand = bytes(8, 1);
    forward.result = bytes(8, 2);
    forward.data.clear();
    message copy;
    copy.what = message_kind::copy;
    copy.uid = 7;
    copy.block = 0;
    copy.data = bytes(64, 'c');
    copy.records = bytes(36, 'r');
    for (const auto* m : {&put, &forward, &copy}) t.seeds.push_back(encode_message(*m));
    t.decode = [seeds = t.seeds](const char* data, std::size_t size, int expected, std::string& why) {
        const bytes in(data, data + size);
        const auto d = decode_message(in.data(), in.size());
        if (!d) {
            why = d.why();
            return verdict::refused;
        }
        if (encode_message(*d) != in) {  // every byte accounted for, nothing read past the end
            why = "the message does not encode back to its bytes";
            return verdict::wrong;
        }
        if (expected >= 0 && in != seeds[static_cast<std::size_t>(expected)]) {
            why = "the message changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

}  // namespace

std::vector<target> pgas_targets() { return {head_target(), message_target()}; }

}  // namespace rampart::fuzz
