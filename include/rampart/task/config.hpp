#pragma once
// The RAMPART_* environment variables, read in one place. Function arguments
// take precedence over them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rampart {

/// A crash to inject: logical rank `rank` kills itself with SIGKILL after
/// `seconds` from the start of communication, or when the program reports
/// iteration `iteration` (see rampart::comm::report_iteration).
struct kill_order {
    int rank = 0;
    std::optional<double> seconds;
    std::optional<std::uint64_t> iteration;
};

struct environment_config {
    std::optional<int> threads;     ///< RAMPART_THREADS: worker threads of the runtime
    std::vector<kill_order> kills;  ///< RAMPART_KILL: "R@1.5s" or "R@iter40", comma-separated
    std::string report;             ///< RAMPART_REPORT: path prefix for each rank's JSON report
};

/// Parses one RAMPART_KILL value, e.g. "1@iter40,2@0.5s".
std::vector<kill_order> parse_kill_orders(const std::string& text);

/// Reads and checks the RAMPART_* variables of the process environment. An
/// unknown RAMPART_* name or a malformed value is a std::invalid_argument that
/// names the variable.
environment_config read_environment_config();

}  // namespace rampart
