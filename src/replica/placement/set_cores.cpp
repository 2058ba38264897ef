#include "set_cores.hpp"

#include <algorithm>
#include <cstddef>
#include <map>

namespace rampart::replica::detail {

namespace {
// How many cores of its own each set gets: its share of `cpus` in
// proportion to its processes, rounded down but at least one; when those
// minimums overrun the cores, the largest shares give one back.
std::map<int, std::size_t> shares(const std::map<int, std::size_t>& members, std::size_t cpus) {
    std::size_t programs = 0, given = 0;
    for (const auto& [s, count] : members) programs += count;
    std::map<int, std::size_t> out;
    for (const auto& [s, count] : members) given += out[s] = std::max<std::size_t>(1, cpus * count / programs);
    while (given > cpus) {
        auto largest = out.begin();
        for (auto it = out.begin(); it != out.end(); ++it)
            if (it->second > largest->second) largest = it;
        --largest->second;
        --given;
    }
    return out;
}
}  // namespace

std::vector<std::vector<int>> set_cores(const std::vector<int>& set_of, const std::vector<int>& cpus) {
    std::vector<std::vector<int>> out(set_of.size());
    std::map<int, std::size_t> members;  // set -> its processes on the node
    for (int s : set_of)
        if (s >= 0) ++members[s];
    const std::size_t n = cpus.size();
    if (set_of.size() <= n || members.size() < 2 || members.size() > n) return out;

    std::map<int, std::vector<int>> cores;  // set -> its cores
    std::size_t next = 0;
    for (const auto& [s, share] : shares(members, n)) {
        const auto from = cpus.begin() + static_cast<std::ptrdiff_t>(next);
        cores[s].assign(from, from + static_cast<std::ptrdiff_t>(share));
        next += share;
    }
    for (auto& [s, mine] : cores)  // cores left over: shared by every set
        mine.insert(mine.end(), cpus.begin() + static_cast<std::ptrdiff_t>(next), cpus.end());
    for (std::size_t i = 0; i < set_of.size(); ++i)
        if (set_of[i] >= 0) out[i] = cores[set_of[i]];
    return out;
}

}  // namespace rampart::replica::detail
