#include "send_log.hpp"

#include <stdexcept>
#include <string>

namespace rampart::recovery::detail {

void send_log::record(const comm::detail::envelope& env, const comm::detail::outgoing_payload& payload) {
    auto& ch = channels_[{env.destination, env.tag}];
    if (env.sequence != ch.size())
        throw std::logic_error("rampart: send log for rank " + std::to_string(env.destination) + " tag " +
                               std::to_string(env.tag) + " expected sequence " + std::to_string(ch.size()) + ", got " +
                               std::to_string(env.sequence));
    ch.push_back({env, payload});
    bytes_ += sizeof(env) + payload.bytes;
    ++messages_;
}

}  // namespace rampart::recovery::detail
