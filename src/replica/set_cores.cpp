#include "set_cores.hpp"

#include <algorithm>
#include <cstddef>
#include <map>

namespace rampart::replica::detail {

std::vector<std::vector<int>> set_cores(const std::vector<int>& set_of, const std::vector<int>& cpus) {
    std::vector<std::vector<int>> out(set_of.size());
    std::map<int, std::size_t> members;  // set -> its processes on the node
    for (int s : set_of)
        if (s >= 0) ++members[s];
    std::size_t programs = 0;
    for (const auto& [s, count] : members) programs += count;
    const std::size_t n = cpus.size();
    if (set_of.size() <= n || members.size() < 2) return out;

    std::map<int, std::vector<int>> cores;  // set -> its cores
    std::size_t next = 0;
    for (const auto& [s, count] : members) {
        const std::size_t share = n * count / programs;
        if (share == 0) return out;  // fewer cores than sets: no set has one of its own
        cores[s].assign(cpus.begin() + static_cast<std::ptrdiff_t>(next),
                        cpus.begin() + static_cast<std::ptrdiff_t>(next + share));
        next += share;
    }
    for (auto& [s, mine] : cores)
        mine.insert(mine.end(), cpus.begin() + static_cast<std::ptrdiff_t>(next), cpus.end());
    for (std::size_t i = 0; i < set_of.size(); ++i)
        if (set_of[i] >= 0) out[i] = cores[set_of[i]];
    return out;
}

}  // namespace rampart::replica::detail
