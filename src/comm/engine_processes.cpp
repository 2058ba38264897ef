// The processes of the job: who runs where, and ending hung ones.
//
// MPI's failure detector (with rampart-run --detect-hangs) declares a process
// dead that stopped answering, but the process itself may live on, stopped
// or spinning: it keeps the launcher from ending and, on several nodes, the
// shrink of a recovery waits for it. So every survivor on the same host
// kills it. Processes learn each other's pid and host once, at start-up.

#include "engine_impl.hpp"

#include <csignal>
#include <cstdio>
#include <functional>
#include <string>
#include <unistd.h>

namespace rampart::comm::detail {

namespace {
std::uint64_t this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return 0;
    return std::hash<std::string>{}(name) | 1;  // 0 stays "unknown"
}
}  // namespace

void engine::impl::exchange_process_ids() {
    const auto n = static_cast<std::size_t>(world_size_);
    pid_of_process_.assign(n, 0);
    host_of_process_.assign(n, 0);
    if (world_size_ == 1) return;
    struct id {
        std::int64_t pid;
        std::uint64_t host;
    };
    const id mine{static_cast<std::int64_t>(::getpid()), this_host()};
    std::vector<id> all(n);
    const int rc = MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm_);
    // A process that died during start-up fails the step; recovery follows,
    // and the ids stay unknown (nobody is killed by a guess).
    if (!confirmed(rc == MPI_SUCCESS)) {
        if (rc != MPI_SUCCESS) failure_text(rc);
        return;
    }
    for (std::size_t p = 0; p < n; ++p) {
        pid_of_process_[p] = all[p].pid;
        host_of_process_[p] = all[p].host;
    }
}

std::vector<int> engine::impl::failed_processes() {
    std::vector<int> out;
#if RAMPART_HAVE_ULFM
    // Acknowledged, so that receives from any source work again (ULFM
    // reports an unacknowledged failure on each of them).
    MPIX_Comm_failure_ack(comm_);
    MPI_Group failed = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    if (MPIX_Comm_failure_get_acked(comm_, &failed) != MPI_SUCCESS) return out;
    int n = 0;
    MPI_Group_size(failed, &n);
    if (n > 0) {
        std::vector<int> in(static_cast<std::size_t>(n)), ranks(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_translate_ranks(failed, n, in.data(), world, ranks.data());
        MPI_Group_free(&world);
        for (int r : ranks)
            if (r != MPI_UNDEFINED) out.push_back(r);
    }
    MPI_Group_free(&failed);
#endif
    return out;
}

void engine::impl::kill_processes(const std::vector<int>& processes) {
    const std::uint64_t here = host_of_process_.empty() ? 0 : host_of_process_[static_cast<std::size_t>(process_)];
    for (int p : processes) {
        if (p < 0 || p >= world_size_ || p == process_) continue;
        const auto i = static_cast<std::size_t>(p);
        const std::int64_t pid = pid_of_process_[i];
        if (here == 0 || host_of_process_[i] != here || pid <= 1 || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), SIGKILL) == 0) killed_.emplace_back(p, wall_clock_us());
    }
}

}  // namespace rampart::comm::detail
