// Fuzz targets of the engine's decoders (src/comm/wire.hpp) and of
// channel_state::from_bytes.

#include "targets.hpp"

#include "../../src/comm/wire.hpp"

#include <rampart/comm/detail/engine.hpp>
#include <rampart/resilience/errors.hpp>

#include <cstring>
#include <string>

namespace rampart::fuzz {

namespace {

using namespace rampart::comm::detail;
constexpr int ranks = 4, max_tag = 1 << 20;

template <class T>
bytes as_bytes(const T* p, std::size_t n) {
    const char* c = reinterpret_cast<const char*>(p);
    return bytes(c, c + n * sizeof(T));
}

// As the engine sends a program message: its envelope, then the payload.
bytes message(const outgoing_payload& p, int tag, std::uint64_t sequence) {
    envelope e;
    e.kind = static_cast<std::uint16_t>(p.kind);
    e.type_hash = p.type;
    e.source = 1;
    e.destination = 2;
    e.tag = tag;
    e.sequence = sequence;
    e.payload_bytes = p.bytes;
    // One buffer, copied into: GCC 12 warns (-Warray-bounds, wrongly) about
    // inserting the payload after the envelope's bytes.
    bytes b(sizeof e + p.bytes);
    std::memcpy(b.data(), &e, sizeof e);
    if (p.bytes > 0) std::memcpy(b.data() + sizeof e, p.data, p.bytes);
    return b;
}

target envelope_target() {
    target t{"envelope", {}, {}};
    t.seeds = {message(encode(std::vector<double>{1.5, 2.5, -3}), 7, 0), message(encode(42), 0, 9),
               message(encode(std::string("a cereal payload")), 3, 1), message(encode(std::vector<int>{}), 5, 2)};
    t.decode = [seeds = t.seeds](const char* data, std::size_t size, int expected, std::string& why) {
        // As the engine receives it: shorter than an envelope, or an envelope and the rest.
        const bool truncated = size < sizeof(envelope);
        auto e = check_envelope(data, truncated ? size : sizeof(envelope), truncated ? 0 : size - sizeof(envelope));
        if (!e) {
            why = e.why();
            return verdict::refused;
        }
        if (expected >= 0 &&
            std::memcmp(&*e, seeds[static_cast<std::size_t>(expected)].data(), sizeof(envelope)) != 0) {
            why = "the envelope changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

bytes control(std::uint64_t what, int source, std::vector<std::uint64_t> words) {
    const envelope e = control_envelope(source, what, words.size() * sizeof(std::uint64_t));
    bytes b = as_bytes(&e, 1);
    bytes w = as_bytes(words.data(), words.size());
    b.insert(b.end(), w.begin(), w.end());
    return b;
}

target control_target() {
    target t{"control", {}, {}};
    t.seeds = {control(control_done, 1, {2, 0, 5, 7, 1, max_tag, 3}),
               control(control_done, 3, {0}),
               control(control_restored, 2, {4, 100, 9, 1}),
               control(control_restored, 0, {}),
               control(control_failed, 1, {}),
               control(control_stopped, 3, {})};
    t.decode = [seeds = t.seeds](const char* data, std::size_t size, int expected, std::string& why) {
        auto m = decode_control(data, size, ranks, max_tag);
        if (!m) {
            why = m.why();
            return verdict::refused;
        }
        if (expected >= 0) {
            const bytes& s = seeds[static_cast<std::size_t>(expected)];
            if (std::memcmp(&m->env, s.data(), sizeof(envelope)) != 0 ||
                as_bytes(m->words.data(), m->words.size()) != bytes(s.begin() + sizeof(envelope), s.end())) {
                why = "the control message changed";
                return verdict::wrong;
            }
        }
        return verdict::accepted;
    };
    return t;
}

target channel_counts_target() {
    target t{"channel_counts", {}, {}};
    std::vector<channel_counts> values = {
        {{{0, 3}, {7, 1}}, {{0, 2, 5}, {max_tag, 0, 0}}}, {{}, {}}, {{{9, 100}}, {}}, {{}, {{1, 4, 4}, {2, 0, 8}}}};
    for (const channel_counts& c : values) {
        std::vector<std::uint64_t> words;
        append_channel_counts(words, c);
        t.seeds.push_back(as_bytes(words.data(), words.size()));
    }
    t.decode = [values](const char* data, std::size_t size, int expected, std::string& why) {
        // It arrives as whole words (MPI_UINT64_T); an idle spare sends none.
        std::vector<std::uint64_t> words(size / sizeof(std::uint64_t));
        if (words.empty()) return verdict::refused;
        std::memcpy(words.data(), data, words.size() * sizeof(std::uint64_t));
        auto c = decode_channel_counts(words.data(), words.size(), max_tag);
        if (!c) {
            why = c.why();
            return verdict::refused;
        }
        if (expected >= 0 && !(*c == values[static_cast<std::size_t>(expected)])) {
            why = "the channel counts changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

target service_states_target() {
    target t{"service_states", {}, {}};
    std::vector<std::vector<service_state>> values = {
        {{1, {'a', 'b', 'c'}}, {2, {}}, {7, bytes(40, 'x')}}, {}, {{3, bytes(9, '\0')}}};
    for (const auto& v : values) {
        bytes b;
        for (const service_state& s : v) append_service_state(b, s.number, s.bytes);
        t.seeds.push_back(b);
    }
    t.decode = [values](const char* data, std::size_t size, int expected, std::string& why) {
        auto v = decode_service_states(data, size);
        if (!v) {
            why = v.why();
            return verdict::refused;
        }
        if (expected >= 0 && *v != values[static_cast<std::size_t>(expected)]) {
            why = "the service states changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

target service_prefix_target() {
    target t{"service_prefix", {}, {}};
    const std::vector<int> numbers = {1, 2, 1000};
    for (int n : numbers) {
        bytes b(service_prefix + 24, 'h');
        write_service_prefix(b.data(), n);
        t.seeds.push_back(b);
    }
    t.decode = [numbers](const char* data, std::size_t size, int expected, std::string& why) {
        auto n = decode_service_prefix(data, size);
        if (!n) {
            why = n.why();
            return verdict::refused;
        }
        if (expected >= 0 && *n != numbers[static_cast<std::size_t>(expected)]) {
            why = "the service number changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    };
    return t;
}

target channel_state_target() {
    target t{"channel_state", {}, {}};
    std::vector<channel_state> values(3);
    values[0].rank = 2;
    values[0].sent = {{0, 0, 5}, {1, 3, 7}, {3, 0, 1}};
    values[0].received = {{0, 0, 4}, {1, 9, 2}};
    values[1].rank = 0;
    values[2].rank = 5;
    values[2].received = {{4, max_tag, 1ULL << 40}};
    for (const channel_state& s : values) t.seeds.push_back(s.to_bytes());
    t.decode = [values](const char* data, std::size_t size, int expected, std::string& why) {
        try {
            channel_state s = channel_state::from_bytes(data, size);
            if (expected >= 0 && !(s == values[static_cast<std::size_t>(expected)])) {
                why = "the channel state changed";
                return verdict::wrong;
            }
            return verdict::accepted;
        } catch (const rampart::invalid_argument& e) {
            why = e.what();
            return verdict::refused;
        }
    };
    return t;
}

}  // namespace

std::vector<target> comm_targets() {
    return {envelope_target(),       control_target(),        channel_counts_target(),
            service_states_target(), service_prefix_target(), channel_state_target()};
}

}  // namespace rampart::fuzz
