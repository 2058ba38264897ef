// The peers of the fault-tolerant hypercube barrier (see hypercube.hpp).

#include "hypercube.hpp"

#include <algorithm>

namespace rampart::pgas::detail {

namespace {

bool lives(int r, const std::vector<char>& alive) {
    return r >= 0 && r < static_cast<int>(alive.size()) && alive[static_cast<std::size_t>(r)];
}

// The living rank of q's 2^k-subcube nearest to q (by XOR distance), -1 if none.
int substitute(int q, int k, const std::vector<char>& alive) {
    const int base = (q >> k) << k;
    int best = -1;
    for (int y = base; y < base + (1 << k) && y < static_cast<int>(alive.size()); ++y)
        if (lives(y, alive) && (best < 0 || (y ^ q) < (best ^ q))) best = y;
    return best;
}

}  // namespace

int hypercube_steps(int p) {
    int k = 0;
    while ((1 << k) < p) ++k;
    return k;
}

bool in_other_half(int x, int k, int source) { return (source >> k) == ((x >> k) ^ 1); }

bool other_half_alive(int x, int k, const std::vector<char>& alive) {
    return substitute(x ^ (1 << k), k, alive) >= 0;
}

std::vector<int> hypercube_peers(int x, int k, const std::vector<char>& alive) {
    std::vector<int> out;
    const int q = x ^ (1 << k);
    if (lives(q, alive)) {
        out.push_back(q);
    } else if (const int s = substitute(q, k, alive); s >= 0) {
        out.push_back(s);
    }
    // Ranks of the other half whose partner (in x's half) is dead and whose
    // substitute is x.
    const int base = (q >> k) << k;
    for (int y = base; y < base + (1 << k) && y < static_cast<int>(alive.size()); ++y)
        if (lives(y, alive) && !lives(y ^ (1 << k), alive) && substitute(y ^ (1 << k), k, alive) == x)
            out.push_back(y);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace rampart::pgas::detail
