#pragma once
// Where the test hook of kill_hook.hpp makes this process die.

#include <cstdint>

namespace rampart::pgas::detail {

enum class kill_step : int {
    none = 0,
    in_primary = 1,      // the writer, on one node
    between = 2,
    before_forward = 3,  // the holders, across nodes
    after_forward = 4,
    before_answer = 5,
};

/// The step at which to die in this write to a block whose primary is on
/// `primary_rank` (counted down by kill_during_write's nth), or none.
kill_step kill_now(int primary_rank);
/// Prints "rank R: dies STEP" and raises SIGKILL.
[[noreturn]] void die(int me, const char* step);

}  // namespace rampart::pgas::detail
