#pragma once
// The fault-test harness of the multi-rank tests: real crashes (SIGKILL of
// this process), waits for the runtime to report them, each with a deadline,
// and byte comparisons that say where data differs. Every test program links
// mpi_test_main.cpp, which runs the GoogleTest cases selected by
// --gtest_filter on every rank and prints one verdict line per rank:
//
//     rank 2 (incarnation 0): PASS 1 test
//     rank 3 (incarnation 1): FAIL: 1 of 2 tests failed
//
// A rank killed on purpose prints nothing; mpiexec's exit status is then the
// survivors', so a failing survivor fails the CTest entry.
//
//     TEST(StoreRepair, SurvivesTwoFailures) {
//         mpi_test::kill_ranks({1});                         // rank 1 dies here
//         auto lost = mpi_test::wait_for_lost(1);            // the others see it
//         EXPECT_EQ(lost, std::vector<int>{1});
//         EXPECT_BYTES_EQ(store.load({{0, n}}), expected);
//     }

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace mpi_test {

using namespace std::chrono_literals;

/// How long a test waits for the runtime by default: detection takes
/// milliseconds, but a loaded machine may stretch a recovery to seconds.
inline constexpr std::chrono::milliseconds default_deadline = 30s;

int rank();
int size();
int incarnation();

/// A real crash: this process raises SIGKILL if its logical rank is one of
/// `victims` (output flushed first). The others return at once.
void kill_ranks(std::initializer_list<int> victims);
void kill_ranks(const std::vector<int>& victims);

/// Waits until `done()` is true, or the deadline passes; returns done().
template <class F>
bool wait_until(F done, std::chrono::milliseconds deadline = default_deadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= end) return done();
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

/// Waits until at least `n` ranks are lost for good (no spare took them);
/// returns the lost ranks then. Fails the test at the deadline.
std::vector<int> wait_for_lost(std::size_t n, std::chrono::milliseconds deadline = default_deadline);

/// Waits until at least `n` recoveries have ended (a spare took a dead
/// rank's place, or a rank was lost). Fails the test at the deadline.
void wait_for_recoveries(std::uint64_t n, std::chrono::milliseconds deadline = default_deadline);

/// "" when `got` and `want` hold the same bytes; else their sizes, or the
/// first offset where they differ and how many bytes differ.
std::string byte_difference(std::span<const std::byte> got, std::span<const std::byte> want);

template <class A, class B>
std::string byte_difference_of(const A& got, const B& want) {
    return byte_difference(std::as_bytes(std::span(got)), std::as_bytes(std::span(want)));
}

/// The verdict line of this rank (see above); returns the exit status.
int verdict(int failed_tests, int tests);

}  // namespace mpi_test

/// Checks that two containers of trivially copyable elements hold the same
/// bytes, naming the first difference.
#define EXPECT_BYTES_EQ(got, want) EXPECT_EQ(::mpi_test::byte_difference_of((got), (want)), "")
