#include "send_log.hpp"

#include <stdexcept>
#include <string>

namespace rampart::recovery::detail {

namespace {
std::string channel_text(int dest, int tag) {
    return "send log for rank " + std::to_string(dest) + " tag " + std::to_string(tag);
}
}  // namespace

void send_log::record(const comm::detail::envelope& env, const comm::detail::outgoing_payload& payload) {
    auto& ch = channels_[{env.destination, env.tag}];
    const std::uint64_t expected = ch.base + ch.messages.size();
    if (env.sequence != expected)
        throw std::logic_error("rampart: " + channel_text(env.destination, env.tag) + " expected sequence " +
                               std::to_string(expected) + ", got " + std::to_string(env.sequence));
    ch.messages.push_back({env, payload});
    bytes_ += sizeof(env) + payload.bytes;
    ++messages_;
}

void send_log::start_at(int dest, int tag, std::uint64_t base) {
    auto& ch = channels_[{dest, tag}];
    if (!ch.messages.empty() || ch.base != 0)
        throw std::logic_error("rampart: " + channel_text(dest, tag) + " cannot start at " + std::to_string(base) +
                               ": it is in use (next sequence " + std::to_string(ch.base + ch.messages.size()) + ")");
    ch.base = base;
}

std::uint64_t send_log::trim(int dest, int tag, std::uint64_t upto) {
    const auto it = channels_.find({dest, tag});
    const std::uint64_t next = it == channels_.end() ? 0 : it->second.base + it->second.messages.size();
    if (upto > next)
        throw std::invalid_argument("rampart: " + channel_text(dest, tag) + ": cannot trim up to sequence " +
                                    std::to_string(upto) + ", only " + std::to_string(next) + " messages were sent");
    if (it == channels_.end() || upto <= it->second.base) return 0;
    channel& ch = it->second;
    const std::uint64_t n = upto - ch.base;
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t b = sizeof(comm::detail::envelope) + ch.messages.front().payload.bytes;
        bytes_ -= b;
        trimmed_bytes_ += b;
        ch.messages.pop_front();
    }
    ch.base = upto;
    messages_ -= n;
    trimmed_messages_ += n;
    if (ch.messages.empty()) ch.messages.shrink_to_fit();  // a long-lived channel gives its blocks back
    return n;
}

std::uint64_t send_log::base(int dest, int tag) const {
    const auto it = channels_.find({dest, tag});
    return it == channels_.end() ? 0 : it->second.base;
}

std::uint64_t send_log::next(int dest, int tag) const {
    const auto it = channels_.find({dest, tag});
    return it == channels_.end() ? 0 : it->second.base + it->second.messages.size();
}

}  // namespace rampart::recovery::detail
