#pragma once
// The arrays' part of the communication engine: one service per process
// (rampart/comm/service.hpp), attached at the first collective call of the
// layer. It knows which ranks are dead (from the engine's recoveries, which
// rest on ULFM's failure notification), runs the collective exchanges of
// array creation, carries the fault-tolerant barrier, and runs the arrays'
// repairs after a failure on a thread of its own (handlers on the engine
// thread must not wait).

#include <rampart/comm/service.hpp>

#include "barrier_mailboxes.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace rampart::pgas::detail {

class message_path;

class pgas_service final : public comm::service {
public:
    /// The process's service; the first call attaches it (collective).
    static pgas_service& get();

    int rank() const noexcept { return me_; }
    int size() const noexcept { return p_; }
    /// This process's node: its host, or rank / k with RAMPART_RANKS_PER_NODE=k.
    std::uint64_t node() const noexcept { return node_; }
    /// Every rank's node, as told when the service started (0: unknown,
    /// the rank died before).
    const std::vector<std::uint64_t>& nodes() const noexcept { return nodes_; }
    /// The recoveries this process has gone through.
    std::uint64_t recoveries() const noexcept { return recoveries_.load(); }
    bool dead(int r) const noexcept { return dead_[static_cast<std::size_t>(r)].load(std::memory_order_acquire) != 0; }
    /// alive[r] for every rank, as known now.
    std::vector<char> alive() const;
    /// Changes with every death this process learns of.
    std::uint64_t deaths() const noexcept { return deaths_.load(); }  // seq_cst: see barrier()
    /// Microseconds on the steady clock when this process learnt of rank
    /// r's death (0 while it lives).
    std::int64_t death_known_us(int r) const;

    /// Every living rank gives `mine`; returns each rank's bytes (empty for
    /// ranks dead before they gave theirs). Collective; keys are counted
    /// alike on every rank by the caller.
    std::vector<std::vector<char>> exchange(std::uint64_t key, std::vector<char> mine);
    /// The fault-tolerant hypercube barrier (see hypercube.hpp).
    void barrier();

    /// Runs `job` on the service's thread after every death learnt from now
    /// on, until the returned handle is destroyed.
    std::shared_ptr<void> on_deaths(std::function<void()> job);

    /// The arrays whose ranks span nodes get their messages here (see
    /// message_path.hpp), by the array's number, until they go.
    void add_array(std::uint64_t uid, std::weak_ptr<message_path> path);
    void remove_array(std::uint64_t uid);
    /// Sends a message of array `uid`'s message path; `sent` runs once MPI
    /// has sent it.
    void send_array_message(int dest, std::uint64_t uid, std::vector<char> bytes, std::function<void()> sent = {});
    /// While above 0, the engine polls without pausing (an operation waits).
    void busy_for_operations(int delta) { busy(delta); }

    void on_message(int source, std::vector<char>&& bytes, std::size_t offset) override;
    void on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                     const std::vector<std::vector<char>>& states) override;

    ~pgas_service() override;

private:
    struct busy_while;
    pgas_service();
    void send_to(int dest, const std::vector<char>& message);
    void resend_after_recovery();
    void start_mailboxes();
    void post_steps(std::uint64_t seq, int from_step, int upto_step);
    bool step_done(std::uint64_t seq, int k);
    void wait_step(std::uint64_t seq, int k, std::uint64_t& seen);
    void post_again_if_deaths(std::uint64_t seq, int k, std::uint64_t& seen);
    void run_jobs();
    void to_array(int source, std::uint64_t uid, const char* data, std::size_t size);

    int me_ = 0, p_ = 1;
    std::uint64_t node_ = 0;
    std::vector<std::uint64_t> nodes_;
    std::atomic<std::uint64_t> recoveries_{0};
    std::mutex arrays_m_;
    std::map<std::uint64_t, std::weak_ptr<message_path>> arrays_;
    std::unique_ptr<std::atomic<std::uint8_t>[]> dead_;
    std::unique_ptr<std::atomic<std::int64_t>[]> death_us_;
    std::atomic<std::uint64_t> deaths_{0};

    mutable std::mutex m_;
    std::condition_variable cv_;
    std::map<std::uint64_t, std::vector<std::vector<char>>> exchanged_;  // key -> bytes by rank
    std::map<std::uint64_t, std::vector<char>> my_parts_;                // the last exchanges' own parts
    std::map<std::uint64_t, std::set<std::pair<int, int>>> steps_seen_;  // barrier -> (step, source)
    std::atomic<std::uint64_t> barrier_seq_{0};  // barriers ended here
    std::unique_ptr<barrier_mailboxes> mail_;    // on one node; else the barrier sends messages
    std::uint64_t malformed_ = 0;
    std::uint64_t exchanges_done_ = 0;  // the keys below this one ended here

    std::mutex jobs_m_;
    std::condition_variable jobs_cv_;
    std::mutex listeners_m_;  // held while the jobs run
    std::map<std::uint64_t, std::function<void()>> listeners_;
    std::uint64_t next_listener_ = 0;
    bool pending_ = false, stop_ = false;
    std::thread worker_;
};

}  // namespace rampart::pgas::detail
