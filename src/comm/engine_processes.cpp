// The processes of the job: their start (a crash ordered before MPI starts,
// a deadline for MPI_Init), who runs where, and ending hung ones.
//
// MPI's failure detector (with rampart-run --detect-hangs) declares a process
// dead that stopped answering, but the process itself may live on, stopped
// or spinning: it keeps the launcher from ending and, on several nodes, the
// shrink of a recovery waits for it. So every survivor on the same host
// kills it. Processes learn each other's pid and host once, at start-up.

#include "engine_impl.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <unordered_map>

namespace rampart::comm::detail {

namespace {
std::uint64_t this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return 0;
    return std::hash<std::string>{}(name) | 1;  // 0 stays "unknown"
}
}  // namespace

// The program starts once the ids are known: the nodes of the ranks, which
// placements use, come from them.
void engine::impl::exchange_process_ids() {
    gather_process_ids();
    auto nodes = number_nodes();
    std::lock_guard lock(mutex_);
    owner_.nodes_at_start_ = std::move(nodes);
    ids_exchanged_ = true;
    cv_.notify_all();
}

void engine::impl::wait_for_process_ids() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return ids_exchanged_ || state_ == state::failed || state_ == state::stopped; });
}

// Numbered by their lowest rank; a rank whose node is not known (0) is a
// node of its own.
std::vector<int> engine::impl::number_nodes() const {
    const int n = owner_.size_;
    std::vector<int> node(static_cast<std::size_t>(n));
    std::unordered_map<std::uint64_t, int> number;
    int next = 0;
    for (int r = 0; r < n; ++r) {
        const std::uint64_t host = node_of_process_.empty() ? 0 : node_of_process_[static_cast<std::size_t>(r)];
        auto& mine = node[static_cast<std::size_t>(r)];
        if (host == 0) {
            mine = next++;
            continue;
        }
        const auto [it, fresh] = number.try_emplace(host, next);
        next += fresh ? 1 : 0;
        mine = it->second;
    }
    return node;
}

void engine::impl::gather_process_ids() {
    const auto n = static_cast<std::size_t>(world_size_);
    pid_of_process_.assign(n, 0);
    host_of_process_.assign(n, 0);
    node_of_process_.assign(n, 0);
    if (world_size_ == 1) return;
    struct id {
        std::int64_t pid;
        std::uint64_t host, node;
    };
    // A node as this process counts it: its host, or every k processes with
    // RAMPART_RANKS_PER_NODE=k (sent, so that one process's setting decides
    // its own entry only and all agree on the table).
    const auto k = owner_.config_.ranks_per_node;
    const id mine{static_cast<std::int64_t>(::getpid()), this_host(),
                  k ? static_cast<std::uint64_t>(process_ / *k) + 1 : this_host()};
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
        node_of_process_[p] = all[p].node;
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

// Fault injection: a crash while the other processes start MPI. Only the
// launcher's rank is known yet: the order applies to the first process of
// that world rank.
void engine::impl::die_before_mpi_if_ordered() const {
    const char* world_rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!world_rank) return;
    for (const auto& k : owner_.config_.kills)
        if (k.at_start && std::to_string(k.rank) == world_rank) {
            const std::string path = owner_.config_.report + ".kill." + world_rank + ".0";
            if (FILE* f = owner_.config_.report.empty() ? nullptr : std::fopen(path.c_str(), "w")) {
                std::fprintf(f,
                             "{\"rank\":%d,\"incarnation\":0,\"process\":%d,\"at\":\"start\",\"hang\":false,"
                             "\"killed_us\":%lld}\n",
                             k.rank, k.rank, static_cast<long long>(wall_clock_us()));
                std::fclose(f);
            }
            std::raise(SIGKILL);
        }
}

// A process that dies while the others are inside MPI_Init makes them wait
// there forever (the launcher's start-up exchange waits for it; fault
// tolerance begins only once MPI runs). Past a deadline that grows with the
// job, the process gives up with a message and a failure status: nothing of
// the program has run, and rampart-run starts the job again.
void engine::impl::watch_mpi_start() {
    const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
    if (!size) return;
    // A note that this process enters MPI_Init: a launcher that finds it,
    // and no note of a start, knows that MPI's start failed (not that the
    // program refused to start before it).
    const char* world_rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!owner_.config_.report.empty() && world_rank)
        if (FILE* f = std::fopen((owner_.config_.report + ".init." + world_rank).c_str(), "w")) std::fclose(f);
    const auto limit = std::chrono::milliseconds(15000 + 20 * std::atol(size));
    std::thread([this, limit] {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (!mpi_started_.load()) {
            if (std::chrono::steady_clock::now() > deadline) {
                std::fprintf(stderr,
                             "rampart: MPI_Init did not finish within %.0f s: a process of the job probably died while "
                             "the job started; nothing of the program has run\n",
                             std::chrono::duration<double>(limit).count());
                std::fflush(nullptr);
                ::_exit(EXIT_FAILURE);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }).detach();
}

// A note that this process has started MPI and rampart: a launcher that
// finds none knows that nothing of the program ran.
void engine::impl::note_start() const {
    if (owner_.config_.report.empty()) return;
    const std::string path = owner_.config_.report + ".start." + std::to_string(process_);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const nlohmann::ordered_json note = {{"process", process_}, {"pid", static_cast<long long>(::getpid())},
                                         {"host", host}};
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f, "%s\n", note.dump().c_str());
        std::fclose(f);
    }
}

}  // namespace rampart::comm::detail
