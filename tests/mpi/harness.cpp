#include "harness.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>

namespace mpi_test {

int rank() { return rampart::comm::rank(); }
int size() { return rampart::comm::size(); }
int incarnation() { return rampart::recovery::incarnation(); }

void kill_ranks(const std::vector<int>& victims) {
    if (std::find(victims.begin(), victims.end(), rank()) == victims.end()) return;
    std::fflush(nullptr);
    std::raise(SIGKILL);  // as a crash: no cleanup, no Finalize
}

void kill_ranks(std::initializer_list<int> victims) { kill_ranks(std::vector<int>(victims)); }

std::vector<int> wait_for_lost(std::size_t n, std::chrono::milliseconds deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    std::vector<int> lost = rampart::recovery::lost_ranks();
    while (lost.size() < n && std::chrono::steady_clock::now() < end) {
        rampart::recovery::wait_for_losses(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::min<std::chrono::steady_clock::duration>(end - std::chrono::steady_clock::now(), 100ms)));
        lost = rampart::recovery::lost_ranks();
    }
    EXPECT_GE(lost.size(), n) << "rank " << rank() << ": fewer ranks lost than expected within the deadline";
    return lost;
}

void wait_for_recoveries(std::uint64_t n, std::chrono::milliseconds deadline) {
    const bool done = wait_until([n] { return rampart::recovery::recoveries() >= n; }, deadline);
    EXPECT_TRUE(done) << "rank " << rank() << ": " << rampart::recovery::recoveries() << " recoveries, expected " << n;
}

std::string byte_difference(std::span<const std::byte> got, std::span<const std::byte> want) {
    if (got.size() != want.size())
        return std::to_string(got.size()) + " bytes, expected " + std::to_string(want.size());
    std::size_t first = got.size(), differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) {
            first = std::min(first, i);
            ++differ;
        }
    if (differ == 0) return "";
    return std::to_string(differ) + " of " + std::to_string(got.size()) + " bytes differ, the first at offset " +
           std::to_string(first);
}

int verdict(int failed_tests, int tests) {
    const char* noun = tests == 1 ? "test" : "tests";
    if (tests == 0) {  // a filter that selects nothing must not pass
        std::printf("rank %d (incarnation %d): FAIL: no test selected\n", rank(), incarnation());
        std::fflush(stdout);
        return 1;
    }
    if (failed_tests == 0)
        std::printf("rank %d (incarnation %d): PASS %d %s\n", rank(), incarnation(), tests, noun);
    else
        std::printf("rank %d (incarnation %d): FAIL: %d of %d %s failed\n", rank(), incarnation(), failed_tests, tests,
                    noun);
    std::fflush(stdout);
    return failed_tests == 0 ? 0 : 1;
}

}  // namespace mpi_test
