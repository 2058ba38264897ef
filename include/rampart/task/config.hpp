#pragma once
// The RAMPART_* environment variables, read in one place. Function arguments
// take precedence over them.

#include <optional>
#include <string>

namespace rampart {

struct environment_config {
    std::optional<int> threads;  ///< RAMPART_THREADS: worker threads of the runtime
};

/// Reads and checks the RAMPART_* variables of the process environment. An
/// unknown RAMPART_* name or a malformed value is a std::invalid_argument that
/// names the variable.
environment_config read_environment_config();

}  // namespace rampart
