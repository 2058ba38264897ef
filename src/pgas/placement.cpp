// Where the copies of a block live (see placement.hpp).

#include "placement.hpp"

namespace rampart::pgas::detail {

int shadow_host(int primary, const std::vector<std::uint64_t>& node_of, const std::vector<char>& alive) {
    const int p = static_cast<int>(alive.size());
    int same_node = -1;
    for (int k = 1; k < p; ++k) {
        const int r = (primary + k) % p;
        if (!alive[static_cast<std::size_t>(r)]) continue;
        if (node_of[static_cast<std::size_t>(r)] != node_of[static_cast<std::size_t>(primary)]) return r;
        if (same_node < 0) same_node = r;
    }
    return same_node;
}

std::vector<int> block_owners(int blocks, const std::vector<char>& alive) {
    std::vector<int> owners;
    for (int r = 0; r < static_cast<int>(alive.size()) && static_cast<int>(owners.size()) < blocks; ++r)
        if (alive[static_cast<std::size_t>(r)]) owners.push_back(r);
    if (static_cast<int>(owners.size()) < blocks) owners.clear();
    return owners;
}

}  // namespace rampart::pgas::detail
