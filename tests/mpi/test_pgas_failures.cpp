// Distributed arrays after real failures (SIGKILL, no spare ranks): the
// survivors read every block (from the shadows of the dead), keep writing
// to the dead ranks' blocks, make new shadows and survive a later failure;
// a writer that dies in the middle of a put or a read_inc leaves both copies
// whole and equal (the increment taken exactly once); when both copies of a
// block are gone, an operation on it names the patch. Every survivor
// compares the whole array with values computed alike everywhere, bit for
// bit, and the lowest survivor prints what the arrays did (summed over the
// survivors), for the CTest entry to match.
// Run: mpiexec -n 4 test_pgas_failures --gtest_filter='*.one_failure'
#include <rampart/comm/comm.hpp>
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/barrier.hpp>
#include <rampart/pgas/detail/kill_hook.hpp>
#include <rampart/recovery/recovery.hpp>

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace pg = rampart::pgas;

namespace {

constexpr std::int64_t rows = 40, cols = 30;

double value(std::int64_t i, std::int64_t j, int generation) {
    return static_cast<double>(i * 1000 + j) * 0.5 + 0.25 + generation * 1e6;
}

std::vector<double> values(const pg::patch& p, int generation) {
    std::vector<double> v;
    for (auto i = p.lo[0]; i < p.hi[0]; ++i)
        for (auto j = p.lo[1]; j < p.hi[1]; ++j) v.push_back(value(i, j, generation));
    return v;
}

bool is_lost(int r) {
    const auto lost = rampart::recovery::lost_ranks();
    return std::find(lost.begin(), lost.end(), r) != lost.end();
}

int lowest_living() {
    int r = 0;
    while (is_lost(r)) ++r;
    return r;
}

// Every living rank writes its share of rows with `generation` (the rows of
// dead ranks fall to the lowest living one), once every rank has read the
// generation before; then all sync.
void fill(pg::array<double>& a, int generation) {
    a.sync();
    const int me = mpi_test::rank(), p = mpi_test::size();
    for (std::int64_t i = 0; i < rows; ++i) {
        int writer = static_cast<int>(i % p);
        if (is_lost(writer)) writer = lowest_living();
        if (writer != me) continue;
        const pg::patch row{{i, 0}, {i + 1, cols}};
        a.put(row, values(row, generation));
    }
    a.sync();
}

void expect_whole(const pg::array<double>& a, int generation) {
    const auto whole = a.layout().whole();
    EXPECT_EQ(mpi_test::byte_difference_of(a.get(whole).get(), values(whole, generation)), "")
        << "rank " << mpi_test::rank() << ", generation " << generation;
}

// Every block has two copies on distinct living ranks.
void expect_shadowed(const pg::array<double>& a) {
    for (int b = 0; b < a.layout().blocks(); ++b) {
        const auto h = a.holders(b);
        EXPECT_TRUE(h[0] >= 0 && !is_lost(h[0])) << "block " << b << " primary " << h[0];
        EXPECT_TRUE(h[1] >= 0 && !is_lost(h[1]) && h[1] != h[0]) << "block " << b << " shadow " << h[1];
    }
}

// Sums the survivors' counters of `arrays` (through an array of its own) and
// prints them on the lowest survivor.
void report(const char* what, const std::vector<const pg::array<double>*>& arrays, const pg::array<long>& extra) {
    pg::array<long> stats("stats", mpi_test::size() * 4);
    pg::array_counters c = extra.counters();
    for (auto* a : arrays) {
        const auto k = a->counters();
        c.promotions += k.promotions;
        c.repairs += k.repairs;
        c.reshadowed += k.reshadowed;
        c.lost_blocks += k.lost_blocks;
    }
    const long me = mpi_test::rank();
    stats.put(pg::patch::range(me * 4, me * 4 + 4),
              std::vector<long>{static_cast<long>(c.promotions), static_cast<long>(c.repairs),
                                static_cast<long>(c.reshadowed), static_cast<long>(c.lost_blocks)});
    stats.sync();
    long sum[4] = {};
    for (int r = 0; r < mpi_test::size(); ++r) {
        if (is_lost(r)) continue;
        const auto v = stats.get(pg::patch::range(r * 4, r * 4 + 4)).get();
        for (int k = 0; k < 4; ++k) sum[k] += v[static_cast<std::size_t>(k)];
    }
    if (me == lowest_living())
        std::printf("pgas %s: %zu ranks lost, promotions %ld, repairs %ld, reshadowed %ld, lost blocks %ld\n", what,
                    rampart::recovery::lost_ranks().size(), sum[0], sum[1], sum[2], sum[3]);
}

std::vector<long> exchange_pids() {
    const int me = mpi_test::rank(), p = mpi_test::size();
    pg::array<long> pids("pids", p);
    pids.put(pg::patch::element(me), std::vector<long>{static_cast<long>(::getpid())});
    pids.sync();
    auto v = pids.get(pids.layout().whole()).get();
    pids.destroy();
    return v;
}

// The victims die together: the last kills the others and itself within
// microseconds, long before anyone could notice and re-shadow.
void kill_together(const std::vector<int>& victims) {
    const auto pids = exchange_pids();
    const int me = mpi_test::rank();
    if (me == victims.back()) {
        for (int d : victims)
            if (d != me) ::kill(static_cast<pid_t>(pids[static_cast<std::size_t>(d)]), SIGKILL);
        mpi_test::kill_ranks({me});
    }
    if (std::find(victims.begin(), victims.end(), me) != victims.end())
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    mpi_test::wait_for_lost(victims.size());
}

}  // namespace

TEST(PgasFailures, one_failure) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    fill(a, 0);
    mpi_test::kill_ranks({1});
    mpi_test::wait_for_lost(1);
    expect_whole(a, 0);   // block 1 from its shadow
    fill(a, 1);           // writes to the dead rank's block go to its shadow
    expect_whole(a, 1);
    counter.read_inc(1, 5);  // a counter in the dead rank's block
    counter.sync();
    EXPECT_EQ(counter.get(pg::patch::element(1)).get().at(0), 5 * (mpi_test::size() - 1));
    a.reshadow();
    counter.reshadow();
    expect_shadowed(a);
    // More blocks than living ranks: refused alike on every survivor.
    EXPECT_THROW(pg::array<double>("too_many", pg::distribution::blocked({40}, {10}, 4)), rampart::invalid_argument);
    a.sync();
    report("one_failure", {&a}, counter);
}

TEST(PgasFailures, two_failures) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    fill(a, 0);
    kill_together({1, 3});  // not one primary/shadow pair: every block keeps a copy
    expect_whole(a, 0);
    fill(a, 2);
    expect_whole(a, 2);
    a.reshadow();
    expect_shadowed(a);
    a.sync();
    report("two_failures", {&a}, counter);
}

TEST(PgasFailures, reshadow_then_failure) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    fill(a, 0);
    mpi_test::kill_ranks({1});
    mpi_test::wait_for_lost(1);
    a.reshadow();  // block 1 now on rank 2 (its old shadow) and a new shadow
    a.sync();
    mpi_test::kill_ranks({2});  // without the new shadow, block 1 would be lost now
    mpi_test::wait_for_lost(2);
    expect_whole(a, 0);
    fill(a, 3);
    expect_whole(a, 3);
    report("reshadow_then_failure", {&a}, counter);
}

TEST(PgasFailures, both_copies_lost) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    fill(a, 0);
    kill_together({1, 2});  // block 1: primary on 1, shadow on 2
    const pg::patch block1 = a.layout().block_patch(1);
    try {
        (void)a.get(a.layout().whole());
        ADD_FAILURE() << "a get of the whole array should name the lost block";
    } catch (const pg::data_lost& e) {
        EXPECT_EQ(e.block(), 1);
        EXPECT_EQ(e.lost_patch(), block1);
        EXPECT_NE(std::string(e.what()).find(block1.text()), std::string::npos) << e.what();
    }
    EXPECT_THROW(a.put(block1, values(block1, 4)), pg::data_lost);
    // The other blocks are whole.
    for (int b = 0; b < a.layout().blocks(); ++b) {
        if (b == 1) continue;
        const auto p = a.layout().block_patch(b);
        EXPECT_EQ(mpi_test::byte_difference_of(a.get(p).get(), values(p, 0)), "") << "block " << b;
    }
    a.sync();
    report("both_copies_lost", {&a}, counter);
}

namespace {

// Rank `writer` dies at `step` of its put of block 2 (primary on rank 2,
// shadow on rank 3). Both copies must hold the put entirely (died between the
// copies: the put is completed) or not at all (died in the primary: it is
// undone), also when the writer held one of the copies itself (its memory is
// the whole copy then). Unless the writer was rank 2, rank 2 dies later too,
// so that the survivors read the shadow.
void put_dies(const std::string& step, int writer) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    fill(a, 0);
    const pg::patch block2 = a.layout().block_patch(2);
    if (mpi_test::rank() == writer) {
        pg::detail::kill_during_write(step, 1, 2);
        a.put(block2, values(block2, 5));
        ADD_FAILURE() << "rank " << writer << " should have died in its put";
    }
    mpi_test::wait_for_lost(1);
    const int want = step == "between" ? 5 : 0;
    auto expect_all = [&] {
        const auto whole = a.layout().whole();
        auto v = values(whole, 0);
        const auto in2 = values(block2, want);
        std::size_t k = 0;
        for (auto i = block2.lo[0]; i < block2.hi[0]; ++i)
            for (auto j = block2.lo[1]; j < block2.hi[1]; ++j) v[static_cast<std::size_t>(i * cols + j)] = in2[k++];
        EXPECT_EQ(mpi_test::byte_difference_of(a.get(whole).get(), v), "") << "rank " << mpi_test::rank();
    };
    expect_all();
    EXPECT_EQ(a.differing_copies(), std::vector<int>{});
    const std::string name = "put_dies_" + step + (writer == 1 ? "" : "_writer_" + std::to_string(writer));
    report(name.c_str(), {&a}, counter);  // while the rank that mended block 2 lives
    a.sync();
    if (writer == 2) return;
    mpi_test::kill_ranks({2});
    mpi_test::wait_for_lost(2);
    expect_all();  // block 2 from its shadow now
    a.sync();
}

// Rank 1 dies at `step` of a read_inc of element 2 (block 2: primary on
// rank 2, shadow on rank 3); the survivors add 1 each; then rank 2 dies.
// The increment of 7 counts exactly once when the primary was written, not
// at all when it died before.
void read_inc_dies(const std::string& step) {
    pg::array<double> a("data", rows, cols);
    pg::array<long> counter("counter", 4);
    counter.sync();
    if (mpi_test::rank() == 1) {
        pg::detail::kill_during_write(step, 1, 2);
        counter.read_inc(2, 7);
        ADD_FAILURE() << "rank 1 should have died in its read_inc";
    }
    mpi_test::wait_for_lost(1);
    counter.read_inc(2, 1);
    counter.sync();
    const long want = (step == "between" ? 7 : 0) + (mpi_test::size() - 1);
    EXPECT_EQ(counter.get(pg::patch::element(2)).get().at(0), want);
    EXPECT_EQ(counter.differing_copies(), std::vector<int>{});
    report(("read_inc_dies_" + step).c_str(), {&a}, counter);
    counter.sync();
    mpi_test::kill_ranks({2});
    mpi_test::wait_for_lost(2);
    EXPECT_EQ(counter.get(pg::patch::element(2)).get().at(0), want);  // from the shadow
    counter.sync();
}

// Across nodes (one rank a node: the message path). A holder of block 2
// (primary on rank 2, shadow on rank 3) dies at `step` of the first write it
// applies: rank 1's read_inc of element 2 by 7 (or its put of 7). Rank 1's
// call still returns, with an old value made of some of the others' adds
// (which may come first, as the call had not ended); the survivors add 1
// each (after a barrier when rank 1 put: a put and an add do not commute);
// the increment counts exactly once. Then the other holder dies too, and the
// value is read from the shadow made after the first death.
void holder_dies(const std::string& op, const std::string& step) {
    pg::array<long> counter("counter", 4);
    const int me = mpi_test::rank(), victim = step == "before_answer" ? 3 : 2;
    if (me == victim) pg::detail::kill_during_write(step, 1, 2);
    counter.sync();
    if (me == 1 && op == "read_inc") {
        const long old = counter.read_inc(2, 7);
        EXPECT_TRUE(old >= 0 && old <= mpi_test::size() - 2) << "old value " << old;
    }
    if (me == 1 && op == "put") counter.put(pg::patch::element(2), std::vector<long>{7});
    if (me == victim)
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // it dies in the engine's thread
    mpi_test::wait_for_lost(1);
    // A put is not commutative: were the forward lost (with the holder, or
    // dropped by the recovery), rank 1 asks the promoted shadow again, and
    // without this barrier that put may come after the others' adds.
    if (op == "put") counter.sync();
    counter.read_inc(2, 1);
    counter.sync();
    const long want = 7 + (mpi_test::size() - 1);
    EXPECT_EQ(counter.get(pg::patch::element(2)).get().at(0), want);
    counter.reshadow();
    counter.sync();
    EXPECT_EQ(counter.differing_copies(), std::vector<int>{});
    report((op + "_holder_dies_" + step).c_str(), {}, counter);
    counter.sync();
    mpi_test::kill_ranks({5 - victim});
    mpi_test::wait_for_lost(2);
    EXPECT_EQ(counter.get(pg::patch::element(2)).get().at(0), want);  // from the new shadow
    counter.sync();
}

}  // namespace

TEST(PgasFailures, read_inc_holder_dies_before_forward) { holder_dies("read_inc", "before_forward"); }
TEST(PgasFailures, read_inc_holder_dies_after_forward) { holder_dies("read_inc", "after_forward"); }
TEST(PgasFailures, read_inc_holder_dies_before_answer) { holder_dies("read_inc", "before_answer"); }
TEST(PgasFailures, put_holder_dies_after_forward) { holder_dies("put", "after_forward"); }

TEST(PgasFailures, put_dies_in_primary) { put_dies("in_primary", 1); }
TEST(PgasFailures, put_dies_between) { put_dies("between", 1); }
TEST(PgasFailures, put_dies_in_primary_writer_3) { put_dies("in_primary", 3); }  // the shadow's holder
TEST(PgasFailures, put_dies_between_writer_2) { put_dies("between", 2); }        // the primary's holder
TEST(PgasFailures, read_inc_dies_in_primary) { read_inc_dies("in_primary"); }
TEST(PgasFailures, read_inc_dies_between) { read_inc_dies("between"); }

// The barrier with dead ranks: 300 barriers; rank 1 dies before barrier 50
// and rank 4 before barrier 120 (with 6 ranks, so that some partners and
// substitutes are dead). Before barrier i every rank writes i into its slot;
// after it every rank takes a snapshot of the slots. At the end, when every
// death is known, each snapshot must show every surviving rank at i or
// beyond: nobody left a barrier before every living rank had entered it.
TEST(PgasFailures, barrier_with_dead_ranks) {
    const int me = mpi_test::rank(), p = mpi_test::size();
    pg::array<long> arrived("arrived", p);
    std::vector<std::vector<long>> seen;
    for (long i = 1; i <= 300; ++i) {
        if ((i == 50 && me == 1) || (i == 120 && me == 4)) mpi_test::kill_ranks({me});
        arrived.put(pg::patch::element(me), std::vector<long>{i});
        pg::barrier();
        seen.push_back(arrived.get(arrived.layout().whole()).get());
    }
    mpi_test::wait_for_lost(2);
    std::size_t early = 0;
    for (std::size_t k = 0; k < seen.size(); ++k)
        for (int r = 0; r < p; ++r)
            if (!is_lost(r) && seen[k][static_cast<std::size_t>(r)] < static_cast<long>(k + 1)) ++early;
    EXPECT_EQ(early, 0u) << "rank " << me << " left barriers before some living rank had entered them";
    pg::barrier();
    if (me == lowest_living())
        std::printf("pgas barrier_with_dead_ranks: %zu ranks lost, 300 barriers, %zu left early\n",
                    rampart::recovery::lost_ranks().size(), early);
}
