#pragma once
// Which living rank holds the second copy (the shadow) of a block: on
// another node than the primary when there is one (the paper keeps shadows
// on the neighbouring node, so that a node's loss leaves one copy), else the
// next living rank. Every process computes the same answer from the same
// facts: no communication.

#include <cstdint>
#include <vector>

namespace rampart::pgas::detail {

/// The shadow host for a block whose primary is on `primary`: the first
/// rank after `primary` in ring order that is alive and on another node;
/// failing that, the first alive one other than `primary`; -1 if none.
/// `node_of[r]` names rank r's node; `alive[r]` says whether it lives.
int shadow_host(int primary, const std::vector<std::uint64_t>& node_of, const std::vector<char>& alive);

/// At creation: block b (of `blocks`) belongs to the b-th living rank.
/// Returns the owner of each block, or an empty vector if fewer ranks live
/// than there are blocks.
std::vector<int> block_owners(int blocks, const std::vector<char>& alive);

}  // namespace rampart::pgas::detail
