// The engine's decoders (wire.hpp). Refusal texts name the field that is
// wrong; check_envelope's become the text of the receiver's message_error.

#include "wire.hpp"

#include <climits>
#include <cstring>
#include <string>

namespace rampart::comm::detail {

namespace {

constexpr std::size_t word = sizeof(std::uint64_t);

std::string tag_refusal(const char* what, std::size_t entry, std::uint64_t tag, int max_tag) {
    return std::string(what) + " entry " + std::to_string(entry) + " has tag " + std::to_string(tag) +
           ", above the highest program tag " + std::to_string(max_tag);
}

// The payload's words: (tag, count) pairs from `first` on, every tag a program tag.
wire_result<std::vector<std::uint64_t>> tag_pairs(const char* payload, std::size_t bytes, std::size_t first,
                                                  int max_tag, const char* what) {
    if (bytes < first * word || (bytes - first * word) % (2 * word) != 0)
        return wire_result<std::vector<std::uint64_t>>::refused(
            std::string(what) + ": a payload of " + std::to_string(bytes) + " bytes is not " + std::to_string(first) +
            " words and (tag, count) pairs");
    std::vector<std::uint64_t> words(bytes / word);
    if (bytes) std::memcpy(words.data(), payload, bytes);
    for (std::size_t i = first; i < words.size(); i += 2)
        if (words[i] > static_cast<std::uint64_t>(max_tag))
            return wire_result<std::vector<std::uint64_t>>::refused(
                tag_refusal(what, (i - first) / 2, words[i], max_tag));
    return words;
}

}  // namespace

wire_result<envelope> check_envelope(const void* head, std::size_t head_bytes, std::size_t payload_bytes) {
    if (head_bytes < sizeof(envelope))
        return wire_result<envelope>::refused(std::to_string(head_bytes) + " bytes, less than the " +
                                              std::to_string(sizeof(envelope)) + "-byte envelope");
    envelope e;
    std::memcpy(&e, head, sizeof e);
    if (e.magic != envelope::magic_value || e.version != envelope::version_value)
        return wire_result<envelope>::refused("not a rampart envelope");
    if (e.payload_bytes != payload_bytes)
        return wire_result<envelope>::refused("envelope announces " + std::to_string(e.payload_bytes) +
                                              " payload bytes, " + std::to_string(payload_bytes) + " arrived");
    return e;
}

envelope control_envelope(int source, std::uint64_t what, std::size_t payload_bytes) {
    envelope e;
    e.kind = control_kind;
    e.source = source;
    e.sequence = what;
    e.payload_bytes = payload_bytes;
    return e;
}

wire_result<control_message> decode_control(const void* data, std::size_t bytes, int ranks, int max_tag) {
    using result = wire_result<control_message>;
    if (bytes < sizeof(envelope))
        return result::refused("control message of " + std::to_string(bytes) + " bytes, less than an envelope");
    control_message m;
    std::memcpy(&m.env, data, sizeof m.env);
    const envelope& e = m.env;
    const std::size_t payload = bytes - sizeof e;
    if (e.magic != envelope::magic_value || e.version != envelope::version_value || e.kind != control_kind)
        return result::refused("not a control envelope");
    if (e.source < 0 || e.source >= ranks)
        return result::refused("control message from rank " + std::to_string(e.source) + ", not in [0, " +
                               std::to_string(ranks) + ")");
    if (e.payload_bytes != payload)
        return result::refused("control envelope announces " + std::to_string(e.payload_bytes) + " payload bytes, " +
                               std::to_string(payload) + " arrived");
    const char* p = static_cast<const char*>(data) + sizeof e;
    if (e.sequence == control_done || e.sequence == control_restored) {
        const bool done = e.sequence == control_done;
        auto words = tag_pairs(p, payload, done ? 1 : 0, max_tag, done ? "done" : "restored");
        if (!words) return result::refused(words.why());
        m.words = std::move(*words);
        return m;
    }
    if (e.sequence == control_failed || e.sequence == control_stopped) {
        if (payload != 0)
            return result::refused("a failed or stopped notice with " + std::to_string(payload) + " payload bytes");
        return m;
    }
    return result::refused("unknown control message " + std::to_string(e.sequence));
}

void append_channel_counts(std::vector<std::uint64_t>& out, const channel_counts& c) {
    out.push_back(c.held.size());
    for (const auto& h : c.held) out.insert(out.end(), {static_cast<std::uint64_t>(h.tag), h.messages});
    for (const auto& s : c.sending) out.insert(out.end(), {static_cast<std::uint64_t>(s.tag), s.base, s.next});
}

wire_result<channel_counts> decode_channel_counts(const std::uint64_t* words, std::size_t n, int max_tag) {
    using result = wire_result<channel_counts>;
    if (n == 0) return result::refused("no words");
    const std::uint64_t k = words[0];
    if (k > (n - 1) / 2 || (n - 1 - 2 * k) % 3 != 0)
        return result::refused(std::to_string(n) + " words are not k = " + std::to_string(k) + ", k pairs and triples");
    channel_counts c;
    c.held.reserve(static_cast<std::size_t>(k));
    for (std::size_t i = 1; i < 1 + 2 * k; i += 2) {
        if (words[i] > static_cast<std::uint64_t>(max_tag))
            return result::refused(tag_refusal("held", c.held.size(), words[i], max_tag));
        c.held.push_back({static_cast<int>(words[i]), words[i + 1]});
    }
    for (std::size_t i = 1 + 2 * k; i < n; i += 3) {
        if (words[i] > static_cast<std::uint64_t>(max_tag))
            return result::refused(tag_refusal("sending", c.sending.size(), words[i], max_tag));
        if (words[i + 1] > words[i + 2])
            return result::refused("sending entry " + std::to_string(c.sending.size()) + " keeps messages from " +
                                   std::to_string(words[i + 1]) + " on but sends " + std::to_string(words[i + 2]) +
                                   " next");
        c.sending.push_back({static_cast<int>(words[i]), words[i + 1], words[i + 2]});
    }
    return c;
}

void append_service_state(std::vector<char>& out, int number, const std::vector<char>& state) {
    const std::uint32_t head[2] = {static_cast<std::uint32_t>(number), static_cast<std::uint32_t>(state.size())};
    const std::size_t at = out.size();
    out.resize(at + sizeof head + state.size());
    std::memcpy(out.data() + at, head, sizeof head);
    if (!state.empty()) std::memcpy(out.data() + at + sizeof head, state.data(), state.size());
}

wire_result<std::vector<service_state>> decode_service_states(const char* data, std::size_t bytes) {
    using result = wire_result<std::vector<service_state>>;
    std::vector<service_state> out;
    std::size_t at = 0;
    while (at < bytes) {
        std::uint32_t head[2];
        if (bytes - at < sizeof head)
            return result::refused(std::to_string(bytes - at) + " bytes left at byte " + std::to_string(at) +
                                   ", less than an entry's head");
        std::memcpy(head, data + at, sizeof head);
        at += sizeof head;
        if (head[0] > static_cast<std::uint32_t>(INT_MAX))
            return result::refused("service number " + std::to_string(head[0]));
        if (head[1] > bytes - at)
            return result::refused("entry of service " + std::to_string(head[0]) + " announces " +
                                   std::to_string(head[1]) + " bytes, " + std::to_string(bytes - at) + " are left");
        out.push_back({static_cast<int>(head[0]), std::vector<char>(data + at, data + at + head[1])});
        at += head[1];
    }
    return out;
}

void write_service_prefix(char* out, int number) {
    const std::uint32_t prefix[2] = {service_magic, static_cast<std::uint32_t>(number)};
    std::memcpy(out, prefix, service_prefix);
}

wire_result<int> decode_service_prefix(const char* data, std::size_t bytes) {
    if (bytes < service_prefix)
        return wire_result<int>::refused("service message of " + std::to_string(bytes) +
                                         " bytes, less than its prefix");
    std::uint32_t prefix[2];
    std::memcpy(prefix, data, service_prefix);
    if (prefix[0] != service_magic) return wire_result<int>::refused("not a service message");
    if (prefix[1] > static_cast<std::uint32_t>(INT_MAX))
        return wire_result<int>::refused("service number " + std::to_string(prefix[1]));
    return static_cast<int>(prefix[1]);
}

}  // namespace rampart::comm::detail
