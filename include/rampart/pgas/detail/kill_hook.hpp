#pragma once
// A test hook: real crashes in the middle of a write to an array, for the
// tests that prove that a block stays whole wherever its writer dies
// (docs/pgas.md, "A writer that dies").

#include <cstdint>
#include <string>

namespace rampart::pgas::detail {

/// This process dies by SIGKILL during its `nth` write (put, acc or
/// read_inc: 1 is the next one) to a block whose primary is on rank
/// `block_rank`, after printing "rank R: dies STEP". Steps of the writer,
/// on one node: "in_primary" (half of its part of the primary written),
/// "between" (the primary written, nothing of the shadow). Steps of the
/// holders, across nodes (the nth write this process applies to a copy):
/// "before_forward" (the primary applied it and did not forward it),
/// "after_forward" (the primary forwarded it), "before_answer" (the shadow
/// applied it and did not answer). Throws rampart::invalid_argument for
/// another step or an nth below 1.
void kill_during_write(const std::string& step, std::uint64_t nth, int block_rank);

}  // namespace rampart::pgas::detail
