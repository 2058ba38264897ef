#pragma once
// The fault-tolerant barrier of FT-ARMCI: a hypercube in which a rank whose
// partner is dead goes to the rank the dead one would have met next. It
// needs no living rank but those that call it, waits for no dead rank
// beyond the detection of its death, and works with no array.
//
//     rampart::pgas::barrier();   // every living rank has arrived

namespace rampart::pgas {

/// Collective over the living ranks: returns once every rank that lives
/// has called it (ranks that die meanwhile are not waited for). The same
/// sequence of barriers and array creations on every rank.
void barrier();

}  // namespace rampart::pgas
