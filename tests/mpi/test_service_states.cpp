// The engine hands every service the recovery states of its peers (real
// SIGKILL, one spare): rank 1 dies at iteration 5 and a spare replaces it.
// Every survivor's service must get, in that recovery, each survivor's state
// and nothing for rank 1 (its new process has no service yet); the
// replacement, creating its service after the recovery, must find the same
// states in on_attach(). Prints "states agree" on success.
// Run: RAMPART_SPARES=1 RAMPART_KILL=1@iter5 mpiexec -n 5 ...
#include <rampart/comm/comm.hpp>
#include <rampart/comm/service.hpp>
#include <rampart/recovery/recovery.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace {

std::string state_of(int rank, int incarnation) {
    return "rank " + std::to_string(rank) + " incarnation " + std::to_string(incarnation);
}

class probe final : public rampart::comm::service {
public:
    probe() { attach(); }
    ~probe() override { detach(); }
    std::vector<std::vector<char>> states_at_start() {
        std::lock_guard l(m_);
        return at_start_;
    }
    void on_attach(const std::vector<std::vector<char>>& states) override {
        std::lock_guard l(m_);
        at_start_ = states;
    }
    void on_message(int, std::vector<char>&&, std::size_t) override {}
    void on_recovery(const std::vector<int>&, const std::vector<int>&,
                     const std::vector<std::vector<char>>& states) override {
        std::lock_guard l(m_);
        seen_ = states;
        ++recoveries_;
    }
    std::vector<char> recovery_state() override {
        const std::string s = state_of(rampart::comm::rank(), rampart::recovery::incarnation());
        return {s.begin(), s.end()};
    }
    int recoveries() {
        std::lock_guard l(m_);
        return recoveries_;
    }
    std::vector<std::vector<char>> seen() {
        std::lock_guard l(m_);
        return seen_;
    }

private:
    std::mutex m_;
    std::vector<std::vector<char>> seen_, at_start_;
    int recoveries_ = 0;
};

// "" when states[q] is survivor q's state for every q but the replaced rank 1,
// whose entry is empty; else what differs.
std::string check(const std::vector<std::vector<char>>& states, int size) {
    if (static_cast<int>(states.size()) != size) return std::to_string(states.size()) + " entries";
    for (int q = 0; q < size; ++q) {
        const std::string got(states[static_cast<std::size_t>(q)].begin(), states[static_cast<std::size_t>(q)].end());
        const std::string want = q == 1 ? "" : state_of(q, 0);
        if (got != want) return "rank " + std::to_string(q) + ": \"" + got + "\", want \"" + want + "\"";
    }
    return "";
}

}  // namespace

TEST(ServiceStates, EveryProcessGetsTheSameStatesAtARecovery) {
    const int size = mpi_test::size(), incarnation = mpi_test::incarnation();
    probe p;
    if (incarnation > 0) {
        EXPECT_EQ(check(p.states_at_start(), size), "");
    } else {
        for (std::uint64_t it = 0; it < 10; ++it) rampart::recovery::report_iteration(it);  // rank 1 dies at 5
        ASSERT_TRUE(mpi_test::wait_until([&] { return p.recoveries() > 0; })) << "no recovery";
        EXPECT_EQ(check(p.seen(), size), "");
    }
    std::printf("rank %d (incarnation %d): states agree\n", mpi_test::rank(), incarnation);
}
