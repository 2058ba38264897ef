#pragma once
// What a rank has sent, kept so that it can be sent again after a crash: to
// the spare that replaces a dead rank (which starts from the beginning and
// asks for everything again), and to survivors whose copy was lost in flight.
// The payloads are the ones MPI sent from, shared, never copied.

#include <rampart/comm/serialization.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <utility>

namespace rampart::recovery::detail {

struct logged_message {
    comm::detail::envelope env;
    comm::detail::outgoing_payload payload;
};

class send_log {
public:
    /// Keeps a sent message. Sequence numbers on one (destination, tag)
    /// channel must come in order without gaps, starting at 0.
    void record(const comm::detail::envelope& env, const comm::detail::outgoing_payload& payload);

    /// Calls f(message) for every logged message to `dest` whose sequence is
    /// at least `received(tag)`, channel by channel in sequence order.
    template <class Received, class F>
    void for_each_unreceived(int dest, Received&& received, F&& f) const {
        for (auto it = channels_.lower_bound({dest, 0}); it != channels_.end() && it->first.first == dest; ++it) {
            const std::uint64_t from = received(it->first.second);
            for (std::uint64_t s = from; s < it->second.size(); ++s) f(it->second[static_cast<std::size_t>(s)]);
        }
    }

    std::uint64_t bytes() const noexcept { return bytes_; }
    std::uint64_t messages() const noexcept { return messages_; }

private:
    std::map<std::pair<int, int>, std::deque<logged_message>> channels_;  // (dest, tag) -> by sequence
    std::uint64_t bytes_ = 0;
    std::uint64_t messages_ = 0;
};

}  // namespace rampart::recovery::detail
