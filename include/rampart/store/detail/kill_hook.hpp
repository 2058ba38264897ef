#pragma once
// A test hook: real crashes at each step of a submit's commit protocol
// (docs/store.md, "How a submit commits"), for the tests that prove that
// every survivor decides alike wherever a rank dies.

#include <cstdint>
#include <string>

namespace rampart::store::detail {

/// From now on this process dies by SIGKILL at `step` of its submit of
/// `version` (any store), after printing "rank R: dies at step STEP of its
/// submit of version V". Steps, in protocol order: "begin" (nothing sent
/// yet), "puts" (its copies sent, not known to be held), "stored_partial"
/// (its "stored" sent to one other rank only), "stored" (sent to every
/// rank), "ready_partial", "ready" (the same for "ready"). Throws
/// rampart::invalid_argument for another step.
void kill_during_submit(const std::string& step, std::uint64_t version);

}  // namespace rampart::store::detail
