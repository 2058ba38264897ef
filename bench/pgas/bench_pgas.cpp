// rampart-bench-pgas: the one-sided operations of rampart's distributed
// arrays, with shadows and without, and what a failure costs them. The
// baseline (MPI's own windows, the two-sided round trip, MPI_Barrier) is
// rampart-bench-mpi-one-sided; bench/run_pgas.py runs both in one go.
//
//   --mode latency    8 bytes from rank 0 to an element of rank 1's block:
//                     put, get, acc (doubles), read_inc (int64). A sample is
//                     the mean of --iterations calls (the clock read once per
//                     sample); the median and minimum over --repeat samples.
//   --mode bandwidth  put and get of 1 KiB to 4 MiB into rank 1's block, in
//                     10^9 bytes per second (median over the samples)
//   --mode barrier    rampart::pgas::barrier() on every rank, timed on rank 0
//   --mode fault      the FT-ARMCI paper's experiment (its figures 10-13):
//                     every rank puts (or gets) --bytes into the block of the
//                     next rank (a displaced ring), --iterations times, each
//                     call timed; rank --kill-rank dies (SIGKILL) at iteration
//                     --kill-at. Prints each iteration's latency: the median
//                     and the maximum over the living ranks.
//   --mode detection  rank --kill-rank writes the clock into an array and
//                     dies; every survivor waits until it knows, and the time
//                     from the kill until the last survivor knew is printed
//
// Rank 0 prints; --json prints one JSON object.

#include <rampart/comm/comm.hpp>
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/barrier.hpp>
#include <rampart/pgas/failures.hpp>
#include <rampart/task/runtime.hpp>

#include "bench_pgas.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

// Samples of the mean seconds per call of op() over n calls, after n/10
// untimed calls.
template <class Op>
std::vector<double> sample(long n, int repeat, Op&& op) {
    for (long i = 0; i < std::max(1L, n / 10); ++i) op();
    std::vector<double> out;
    for (int r = 0; r < repeat; ++r) {
        const auto start = clock_type::now();
        for (long i = 0; i < n; ++i) op();
        out.push_back(std::chrono::duration<double>(clock_type::now() - start).count() / static_cast<double>(n));
    }
    return out;
}

json summary_us(const std::vector<double>& s) {
    return {{"median", median(s) * 1e6}, {"min", *std::min_element(s.begin(), s.end()) * 1e6}};
}

// The four 8-byte operations on an element of rank 1's block.
json latency(const options& o, bool shadows) {
    const int p = rampart::comm::size();
    pg::array<double> d("latency_d", 2 * p, pg::array_options{shadows});
    pg::array<std::int64_t> c("latency_c", 2 * p, pg::array_options{shadows});
    const auto el = pg::patch::element(2);  // rank 1's block: elements 2 and 3
    json out;
    if (rampart::comm::rank() == 0) {
        std::vector<double> one{1.0}, back(1);
        out["put"] = summary_us(sample(o.iterations, o.repeat, [&] { d.put(el, one); }));
        out["get"] = summary_us(sample(o.iterations, o.repeat, [&] { d.get(el, std::span<double>(back)); }));
        out["acc"] = summary_us(sample(o.iterations, o.repeat, [&] { d.acc(el, one, 0.5); }));
        out["read_inc"] = summary_us(sample(o.iterations, o.repeat, [&] { (void)c.read_inc(2, 1); }));
    }
    d.sync();
    return out;
}

json bandwidth(const options& o, bool shadows) {
    const int p = rampart::comm::size();
    const std::int64_t per_block = (std::int64_t{4} << 20) / 8;
    pg::array<double> d("bandwidth", per_block * p, pg::array_options{shadows});
    json out;
    if (rampart::comm::rank() == 0) {
        for (std::size_t bytes = 1024; bytes <= (std::size_t{4} << 20); bytes *= 4) {
            const auto n = static_cast<std::int64_t>(bytes / 8);
            const auto q = pg::patch::range(per_block, per_block + n);
            std::vector<double> buf(static_cast<std::size_t>(n), 1.0);
            const long calls = std::max(4L, static_cast<long>((std::size_t{64} << 20) / bytes));
            auto gbps = [&](std::vector<double> s) { return static_cast<double>(bytes) / median(std::move(s)) / 1e9; };
            out["put"][std::to_string(bytes)] = gbps(sample(calls, o.repeat, [&] { d.put(q, buf); }));
            out["get"][std::to_string(bytes)] = gbps(sample(calls, o.repeat, [&] { d.get(q, std::span<double>(buf)); }));
        }
    }
    d.sync();
    return out;
}

json barrier_time(const options& o) {
    pg::barrier();
    const long n = std::max(1L, o.iterations / 100);
    return summary_us(sample(n, o.repeat, [] { pg::barrier(); }));
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"rampart-bench-pgas: one-sided operations of rampart's distributed arrays"};
    app.add_option("--mode", o.mode, "latency, bandwidth, barrier, fault or detection")
        ->check(CLI::IsMember({"latency", "bandwidth", "barrier", "fault", "detection"}));
    app.add_option("--iterations", o.iterations, "calls per sample (fault: iterations of the loop)")
        ->check(CLI::Range(1L, 1L << 30));
    app.add_option("--repeat", o.repeat, "samples")->check(CLI::Range(1, 1000));
    app.add_option("--op", o.op, "fault: put or get")->check(CLI::IsMember({"put", "get"}));
    app.add_option("--bytes", o.bytes, "fault: bytes per call")->check(CLI::Range(std::size_t{8}, std::size_t{1} << 26));
    app.add_option("--kill-rank", o.kill_rank, "fault, detection: the rank that dies")->check(CLI::NonNegativeNumber);
    app.add_option("--kill-at", o.kill_at, "fault: the iteration at which it dies (-1: none)");
    app.add_option("--gap-us", o.gap_us, "fault: microseconds between iterations")->check(CLI::Range(0L, 1000000L));
    app.add_flag("--json", o.json, "print one JSON object");
    CLI11_PARSE(app, argc, argv);

    rampart::runtime rt(1);
    const int p = rampart::comm::size(), me = rampart::comm::rank();
    if (p < 2 || o.kill_rank >= p || ((o.mode == "fault" || o.mode == "detection") && o.kill_rank == 0)) {
        if (me == 0) std::fprintf(stderr, "rampart-bench-pgas: needs 2 ranks or more, and --kill-rank in [1, ranks)\n");
        return 2;
    }
    json out{{"program", "bench_pgas"}, {"mode", o.mode}, {"ranks", p}};
    if (o.mode == "latency") {
        out["latency_us"]["shadows"] = latency(o, true);
        out["latency_us"]["no_shadows"] = latency(o, false);
    } else if (o.mode == "bandwidth") {
        out["bandwidth_GBps"]["shadows"] = bandwidth(o, true);
        out["bandwidth_GBps"]["no_shadows"] = bandwidth(o, false);
    } else if (o.mode == "barrier") {
        out["barrier_us"] = barrier_time(o);
    } else if (o.mode == "fault") {
        out["fault"] = fault_experiment(o);
    } else {
        out["detection_ms"] = detection(o);
    }
    if (me == 0) std::printf("%s\n", o.json ? out.dump().c_str() : out.dump(2).c_str());
    return 0;
}
