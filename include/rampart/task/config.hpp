#pragma once
// The RAMPART_* environment variables, read in one place. Function arguments
// take precedence over them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rampart {

/// A crash to inject: logical rank `rank` kills itself with SIGKILL after
/// `seconds` from the start of its communication, when the program reports
/// iteration `iteration` (see rampart::recovery::report_iteration), just before
/// its process starts MPI (`at_start`: the process of world rank `rank`,
/// before anyone knows it; for crashes during start-up), or when it
/// is in the recovery from another rank's crash, just after the survivors
/// agreed on who died (`during_recovery`), or when its program has ended and
/// it has told the others so, before the final agreement (`at_end`).
/// The j-th order for a rank applies to its j-th incarnation: the first to
/// the process that starts as that rank, the second to the spare that
/// replaces it, and so on. With `hang` ("R@WHEN:stop") the rank stops itself
/// with SIGSTOP instead: a hung process, for failure detectors to find.
struct kill_order {
    int rank = 0;
    std::optional<double> seconds;
    std::optional<std::uint64_t> iteration;
    bool during_recovery = false;
    bool at_end = false;
    bool at_start = false;
    bool hang = false;
};

struct environment_config {
    std::optional<int> threads;  ///< RAMPART_THREADS: worker threads of the runtime
    /// RAMPART_KILL: "R@1.5s", "R@iter40", "R@start", "R@recovery" or "R@end", each
    /// optionally with ":stop", comma-separated
    std::vector<kill_order> kills;
    int spares = 0;      ///< RAMPART_SPARES: how many of the MPI processes wait to replace crashed ranks
    std::string report;  ///< RAMPART_REPORT: path prefix for each rank's JSON report
    /// RAMPART_ERROR_RATE: probability that an attempt of a resilient task
    /// fails on purpose (a soft error that its replay, vote or validation
    /// must handle); plain tasks are never touched.
    double error_rate = 0;
    std::uint64_t seed = 1;  ///< RAMPART_SEED: seed of those failures
    /// RAMPART_RANKS_PER_NODE: treat every k consecutive ranks as one node,
    /// whatever their hosts (placement and data paths across nodes, tried on
    /// one machine)
    std::optional<int> ranks_per_node;
    /// Unknown RAMPART_* names, each with the closest known one: warnings,
    /// not errors (an unrelated variable such as RAMPART_REPO must not stop
    /// a program). The runtime prints them when it starts.
    std::vector<std::string> warnings;
};

/// Parses one RAMPART_KILL value, e.g. "1@iter40,2@0.5s".
std::vector<kill_order> parse_kill_orders(const std::string& text);

/// Reads and checks the RAMPART_* variables of the process environment. A
/// malformed value is a rampart::invalid_argument that names the variable;
/// an unknown name is a warning (`warnings`).
environment_config read_environment_config();

}  // namespace rampart
