// rampart::pgas::dead_ranks and death_noticed: the service's knowledge.

#include <rampart/pgas/failures.hpp>
#include <rampart/task/errors.hpp>

#include "pgas_service.hpp"

#include <string>

namespace rampart::pgas {

std::vector<int> dead_ranks() {
    auto& s = detail::pgas_service::get();
    std::vector<int> out;
    for (int r = 0; r < s.size(); ++r)
        if (s.dead(r)) out.push_back(r);
    return out;
}

std::optional<std::chrono::steady_clock::time_point> death_noticed(int rank) {
    auto& s = detail::pgas_service::get();
    if (rank < 0 || rank >= s.size())
        throw rampart::invalid_argument("rampart::pgas::death_noticed: rank " + std::to_string(rank) +
                                        " is not in [0, " + std::to_string(s.size()) + ")");
    const auto us = s.death_known_us(rank);
    if (!s.dead(rank) || us == 0) return std::nullopt;
    return std::chrono::steady_clock::time_point(std::chrono::microseconds(us));
}

}  // namespace rampart::pgas
