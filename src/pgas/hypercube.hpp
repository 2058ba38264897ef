#pragma once
// The fault-tolerant hypercube barrier of the FT-ARMCI paper (section
// IV-D), as pure functions of the ranks that live, so that every rank
// computes the same peers from the same facts.
//
// In step k of a hypercube barrier a rank hears from the half of its
// 2^(k+1)-subcube that it is not in (the ranks that differ from it in bit k
// and agree above it). Having completed steps 0..k-1, any living rank of
// that half speaks for all of it. So rank x sends its step-k message to its
// partner x ^ 2^k; when the partner is dead, to the partner's substitute:
// the living rank of the partner's half nearest to it (the rank the dead
// partner would have met next, as in the paper's figure 5). A rank also
// sends to every rank of the other half whose partner is dead and who has
// it as substitute, so that messages go both ways. A step is done on any
// step-k message from the other half, or at once when that half has no
// living rank. Ranks from p up to the next power of two count as dead.

#include <vector>

namespace rampart::pgas::detail {

/// Steps of a barrier among p ranks: ceil(log2(p)).
int hypercube_steps(int p);

/// Whether rank `source` is in the other half of rank x's subcube in step k.
bool in_other_half(int x, int k, int source);

/// Whether the other half of x's subcube in step k has a living rank.
bool other_half_alive(int x, int k, const std::vector<char>& alive);

/// The ranks x sends its step-k message to (sorted, without repeats).
std::vector<int> hypercube_peers(int x, int k, const std::vector<char>& alive);

}  // namespace rampart::pgas::detail
