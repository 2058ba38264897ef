// Fuzz targets of the store's decoders: its messages (src/store/wire.hpp)
// and the records of submits in recovery states (decode_records).

#include "targets.hpp"

#include "../../src/comm/wire.hpp"
#include "../../src/store/submit_protocol.hpp"
#include "../../src/store/wire.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace rampart::fuzz {

namespace {

using namespace rampart::store::detail;
using rampart::store::id_range;
constexpr std::size_t block_bytes = 16;

bool same(const std::vector<id_range>& a, const std::vector<id_range>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].first != b[i].first || a[i].count != b[i].count) return false;
    return true;
}

// As the engine sends it: the service prefix, the store's head and ranges, then block bytes.
// A service's message is handed over with its bytes at some offset (after
// the engine's own prefix): the decoder must start there.
constexpr std::size_t message_offset = 12;

bytes message(kind what, std::vector<id_range> ranges, std::size_t payload) {
    head h;
    h.what = what;
    h.op = 3;
    h.request = 11;
    h.version = 2;
    h.total = 64;
    bytes b(message_offset, 'p');  // what the engine put before the store's bytes
    const bytes m = encode(h, ranges);
    b.insert(b.end(), m.begin(), m.end());
    for (std::size_t i = 0; i < payload; ++i) b.push_back(static_cast<char>(i));
    return b;
}

target message_target() {
    target t{"store_message", {}, {}};
    const std::vector<std::vector<id_range>> ranges = {{{0, 2}, {8, 1}}, {{4, 3}}, {}, {}, {{0, 10}, {20, 4}}, {}, {}};
    t.seeds = {message(kind::put, ranges[0], 3 * block_bytes),
               message(kind::get, ranges[1], 0),
               message(kind::ack, ranges[2], 0),
               message(kind::data, ranges[3], 8 + 2 * block_bytes),
               message(kind::done, ranges[4], 0),
               message(kind::ready, ranges[5], 0),
               message(kind::outcome, ranges[6], 0)};
    t.decode = [ranges, seeds = t.seeds](const char* data, std::size_t size, int expected, std::string& why) {
        auto d = decode(data, size, message_offset, block_bytes);
        if (!d) {
            why = d.why();
            return verdict::refused;
        }
        if (d->payload_offset + d->payload_bytes != size) {
            why = "the payload is not the rest of the message";
            return verdict::wrong;
        }
        // What holders rely on, in arithmetic that cannot wrap: every range
        // ends below 2^64, and a put carries exactly the blocks of its ranges.
        unsigned __int128 blocks = 0;
        for (const id_range& r : d->ranges) {
            if (static_cast<unsigned __int128>(r.first) + r.count > std::numeric_limits<std::uint64_t>::max()) {
                why = "a range ends past 2^64";
                return verdict::wrong;
            }
            blocks += r.count;
        }
        if (d->h.what == kind::put && blocks * block_bytes != d->payload_bytes) {
            why = "a put whose payload is not the blocks of its ranges";
            return verdict::wrong;
        }
        if (expected >= 0) {
            const auto e = static_cast<std::size_t>(expected);
            if (!same(d->ranges, ranges[e]) ||
                std::memcmp(&d->h, seeds[e].data() + message_offset, sizeof(head)) != 0) {
                why = "the message changed";
                return verdict::wrong;
            }
        }
        return verdict::accepted;
    };
    return t;
}

// A data message's payload answering a get of parts of 2, 1 and 3 blocks.
target data_target() {
    target t{"store_data", {}, {}};
    const std::vector<std::uint64_t> counts = {2, 1, 3};
    const std::vector<std::vector<char>> here = {{1, 0, 1}, {0, 0, 0}, {1, 1, 1}};
    for (const auto& h : here) {
        bytes b(data_flags_bytes(counts.size()), 0);
        std::size_t blocks = 0;
        for (std::size_t i = 0; i < h.size(); ++i) {
            b[i] = h[i];
            if (h[i]) blocks += counts[i];
        }
        b.resize(b.size() + blocks * block_bytes, 'b');
        t.seeds.push_back(b);
    }
    t.decode = [counts, here](const char* data, std::size_t size, int expected, std::string& why) {
        auto d = decode_data(data, size, counts, block_bytes);
        if (!d) {
            why = d.why();
            return verdict::refused;
        }
        if (expected >= 0 && *d != here[static_cast<std::size_t>(expected)]) {
            why = "the flags changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

bool same(const std::map<std::uint64_t, op_record>& a, const std::map<std::uint64_t, op_record>& b) {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
        if (i->first != j->first || i->second.parts.size() != j->second.parts.size()) return false;
        for (std::size_t q = 0; q < i->second.parts.size(); ++q) {
            const part &x = i->second.parts[q], &y = j->second.parts[q];
            if (x.known != y.known || (x.known && (x.total != y.total || x.flags != y.flags || !same(x.ids, y.ids))))
                return false;
        }
    }
    return true;
}

target records_target() {
    constexpr int ranks = 4;
    target t{"store_records", {}, {}};
    std::vector<std::map<std::uint64_t, op_record>> values(3);
    auto known = [](std::uint64_t total, std::uint64_t flags, std::vector<id_range> ids) {
        part p;
        p.known = true;
        p.total = total;
        p.flags = flags;
        p.ids = std::move(ids);
        return p;
    };
    values[0][5].parts = {known(10, 0, {{0, 5}}), {}, known(10, 0, {{5, 3}, {9, 1}}), known(10, part_invalid, {})};
    values[0][7].parts = {{}, known(4, 0, {{0, 4}}), {}, {}};
    values[2][1].parts = {known(1, 0, {{0, 1}}), known(1, 0, {}), known(1, 0, {}), known(1, 0, {})};
    for (const auto& v : values) {
        bytes b;
        encode_records(v, b);
        t.seeds.push_back(b);
    }
    t.decode = [values](const char* data, std::size_t size, int expected, std::string& why) {
        auto r = decode_records(data, size, ranks);
        if (!r) return verdict::refused;
        if (expected >= 0 && !same(*r, values[static_cast<std::size_t>(expected)])) {
            why = "the records changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

}  // namespace

std::vector<target> store_targets() { return {message_target(), data_target(), records_target()}; }

}  // namespace rampart::fuzz
