// rampart-bench-mpi-one-sided: the baseline half of the one-sided benchmark,
// MPI's own one-sided operations measured in a plain MPI program (no rampart
// header), so that the fault-tolerant version can be compared with it.
//
// Rank 0 is the origin and rank 1 the target; passive target: the origin opens
// one MPI_Win_lock_all epoch per window and completes every operation with
// MPI_Win_flush(1) before it starts the next, which is what an operation costs
// when the program needs its effect (or its result) before it goes on. Rank 1
// and the other ranks wait in a barrier meanwhile, inside MPI: a passive
// target makes no call of its own, but osc rdma needs its progress engine.
//
//   window kinds    allocate: MPI_Win_allocate (Open MPI's osc sm on one
//                   node: loads and stores in shared memory, a flush is a
//                   memory fence); create: MPI_Win_create on memory from
//                   new[] (osc rdma; btl sm offers it no put, get or atomics,
//                   so each operation is an active message that the target's
//                   progress engine serves: it stalls while the target is
//                   outside MPI or has no core, as on a loaded machine)
//   latency_us      8 bytes: put, get, acc (MPI_SUM on a double),
//                   fetch_and_op (MPI_SUM on an int64). A sample is the mean
//                   of --iterations operations, each followed by a flush;
//                   the median over --repeat samples (latency_min_us: the
//                   minimum), after a tenth as many untimed operations
//   bandwidth_GBps  put and get of 1 KiB to 4 MiB, each followed by a flush,
//                   in 10^9 bytes per second: the median over the samples; a
//                   sample moves about --iterations KiB (at least 4 operations).
//                   On an allocated window an operation is the origin's own
//                   memcpy and the target never reads the bytes, so sizes that
//                   fit the origin's caches show cache bandwidth
//   round_trip_us   MPI_Send/MPI_Recv of 8 bytes from rank 0 to 1 and back
//   barrier_us      MPI_Barrier on every rank, timed on rank 0
//
// MPI_ERRORS_RETURN is set on MPI_COMM_WORLD and on every window, as the
// fault-tolerant version needs it; every call's code is checked and a failed
// call ends the job with MPI's message. After the latency samples the origin
// reads back what the target's memory holds (the last value put, the sum of
// the accumulates, the fetched counter): an operation that a flush did not
// complete would show as an error, not as a fast time. Rank 0 prints.

#include <mpi.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using json = nlohmann::ordered_json;
using clock_type = std::chrono::steady_clock;

constexpr const char* program_name = "rampart-bench-mpi-one-sided";
constexpr int origin = 0, target = 1;
constexpr int tag = 7;
const std::vector<std::size_t> bandwidth_sizes = {std::size_t{1} << 10,  std::size_t{4} << 10,   std::size_t{16} << 10,
                                                  std::size_t{64} << 10, std::size_t{256} << 10, std::size_t{1} << 20,
                                                  std::size_t{4} << 20};
constexpr std::size_t window_bytes = std::size_t{4} << 20;  // the largest bandwidth size
// Where the 8-byte operations work in the target's window (byte displacements).
constexpr MPI_Aint put_slot = 0, acc_slot = 8, fop_slot = 16, slot_bytes = 24;

struct options {
    long iterations = 10000;
    int repeat = 11;
    std::vector<std::string> kinds = {"allocate", "create"};
    bool json = false;
};

int world_rank() {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

[[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program_name, world_rank(), why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::abort();
}

// With MPI_ERRORS_RETURN a failed call only returns its code: say which call
// failed and why, and end the job.
void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    fail(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

struct summary {
    double median = 0.0, min = 0.0;
};

summary summarize(std::vector<double> samples) {
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
    return {median, samples.front()};
}

// Untimed calls before the samples: they take the first-use costs (page
// faults on the window, registrations, connections) out of the samples.
long warmup_calls(long n) { return std::max(1L, n / 10); }

// Seconds per call of op() over one run of n calls. The clock is read once
// per run, not per call: a read costs about 25 ns, as much as a put and flush
// on an allocated window.
template <class Op>
double mean_seconds(long n, Op& op) {
    const auto start = clock_type::now();
    for (long i = 0; i < n; ++i) op();
    return std::chrono::duration<double>(clock_type::now() - start).count() / static_cast<double>(n);
}

// `repeat` samples of mean_seconds(n, op), after warmup_calls(n) untimed calls.
template <class Op>
std::vector<double> sample(long n, int repeat, Op&& op) {
    for (long i = 0; i < warmup_calls(n); ++i) op();
    std::vector<double> samples;
    for (int r = 0; r < repeat; ++r) samples.push_back(mean_seconds(n, op));
    return samples;
}

// A window over MPI_COMM_WORLD whose memory is on the target only (the origin
// reads from and writes into buffers of its own). Freed collectively.
class window {
public:
    window(const std::string& kind, int rank) {
        const MPI_Aint bytes = rank == target ? static_cast<MPI_Aint>(window_bytes) : 0;
        if (kind == "allocate") {
            check(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win_), "MPI_Win_allocate");
        } else {
            // Zeroed, so that its pages are touched before any timing, as the
            // warm-up touches those of the allocated window.
            owned_.reset(new char[static_cast<std::size_t>(bytes)]());
            base_ = owned_.get();
            check(MPI_Win_create(base_, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_), "MPI_Win_create");
        }
        check(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    }
    ~window() { MPI_Win_free(&win_); }
    window(const window&) = delete;
    window& operator=(const window&) = delete;
    MPI_Win handle() const { return win_; }

private:
    MPI_Win win_ = MPI_WIN_NULL;
    char* base_ = nullptr;
    std::unique_ptr<char[]> owned_;
};

// The 8-byte operations, each completed by a flush. They count what they did,
// so that verify() can tell what the target's memory must hold.
struct small_ops {
    MPI_Win win;
    std::int64_t puts = 0, accs = 0, fops = 0;
    double got = -1.0;          // what the last get read
    std::int64_t fetched = -1;  // what the last fetch_and_op returned

    void flush() { check(MPI_Win_flush(target, win), "MPI_Win_flush"); }
    void put() {
        const double value = static_cast<double>(++puts);  // a new value each time
        check(MPI_Put(&value, 1, MPI_DOUBLE, target, put_slot, 1, MPI_DOUBLE, win), "MPI_Put");
        flush();
    }
    void get() {
        check(MPI_Get(&got, 1, MPI_DOUBLE, target, put_slot, 1, MPI_DOUBLE, win), "MPI_Get");
        flush();
    }
    void acc() {
        const double one = 1.0;
        check(MPI_Accumulate(&one, 1, MPI_DOUBLE, target, acc_slot, 1, MPI_DOUBLE, MPI_SUM, win), "MPI_Accumulate");
        ++accs;
        flush();
    }
    void fetch_and_op() {
        const std::int64_t one = 1;
        check(MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, target, fop_slot, MPI_SUM, win), "MPI_Fetch_and_op");
        ++fops;
        flush();
    }
    // The target's memory is undefined at first (MPI_Win_allocate): the slots start at zero.
    void zero_slots() {
        const char zeros[slot_bytes] = {};
        check(MPI_Put(zeros, slot_bytes, MPI_BYTE, target, 0, slot_bytes, MPI_BYTE, win), "MPI_Put");
        flush();
    }
};

// Reads the slots back: each flushed operation must have left its effect.
void verify(small_ops& ops, const std::string& kind) {
    double values[2] = {-1.0, -1.0};  // the put and the accumulate slots
    std::int64_t counter = -1;
    check(MPI_Get(values, 2, MPI_DOUBLE, target, put_slot, 2, MPI_DOUBLE, ops.win), "MPI_Get");
    check(MPI_Get(&counter, 1, MPI_INT64_T, target, fop_slot, 1, MPI_INT64_T, ops.win), "MPI_Get");
    ops.flush();
    const auto expect = [&](bool ok, const char* what) {
        if (!ok) fail(kind + " window: " + what + " not as the flushed operations left it");
    };
    expect(values[0] == static_cast<double>(ops.puts), "the put slot");
    expect(ops.got == static_cast<double>(ops.puts), "what get read");
    expect(values[1] == static_cast<double>(ops.accs), "the sum of the accumulates");
    expect(counter == ops.fops && ops.fetched == ops.fops - 1, "the fetch_and_op counter");
}

// On the origin, in its epoch: the four latencies of a window, in microseconds.
void measure_latency(MPI_Win win, const std::string& kind, const options& o, json& median, json& min) {
    small_ops ops{win};
    ops.zero_slots();
    // In this order: get reads what the last put wrote.
    const std::pair<const char*, void (small_ops::*)()> table[] = {{"put", &small_ops::put},
                                                                   {"get", &small_ops::get},
                                                                   {"acc", &small_ops::acc},
                                                                   {"fetch_and_op", &small_ops::fetch_and_op}};
    for (const auto& [name, op] : table) {
        const summary s = summarize(sample(o.iterations, o.repeat, [&ops, op] { (ops.*op)(); }));
        median[name] = s.median * 1e6;
        min[name] = s.min * 1e6;
    }
    verify(ops, kind);
}

// Operations per bandwidth sample: fewer for larger sizes, so that a sample
// moves about iterations KiB (a few milliseconds) whatever the size.
long bandwidth_calls(long iterations, std::size_t bytes) {
    return std::max(4L, iterations * 1024 / static_cast<long>(bytes));
}

// On the origin, in its epoch: put and get bandwidth of every size, GB/s.
json measure_bandwidth(MPI_Win win, const options& o) {
    std::vector<char> local(window_bytes);
    for (std::size_t i = 0; i < local.size(); ++i) local[i] = static_cast<char>(i * 31 + 7);
    json result = {{"put", json::object()}, {"get", json::object()}};
    for (const bool is_put : {true, false}) {
        for (const std::size_t bytes : bandwidth_sizes) {
            const int count = static_cast<int>(bytes);
            auto op = [&] {
                if (is_put)
                    check(MPI_Put(local.data(), count, MPI_BYTE, target, 0, count, MPI_BYTE, win), "MPI_Put");
                else
                    check(MPI_Get(local.data(), count, MPI_BYTE, target, 0, count, MPI_BYTE, win), "MPI_Get");
                check(MPI_Win_flush(target, win), "MPI_Win_flush");
            };
            std::vector<double> rates = sample(bandwidth_calls(o.iterations, bytes), o.repeat, op);
            for (double& s : rates) s = static_cast<double>(bytes) / s / 1e9;
            result[is_put ? "put" : "get"][std::to_string(bytes)] = summarize(rates).median;
        }
    }
    return result;
}

struct kind_result {
    json latency = json::object(), latency_min = json::object(), bandwidth = json::object();
};

// Collective: makes the window, lets the origin measure in one lock_all
// epoch while every other rank waits in a barrier, frees the window.
kind_result measure_kind(const std::string& kind, int rank, const options& o) {
    window w(kind, rank);
    kind_result r;
    if (rank == origin) {
        check(MPI_Win_lock_all(0, w.handle()), "MPI_Win_lock_all");
        measure_latency(w.handle(), kind, o, r.latency, r.latency_min);
        r.bandwidth = measure_bandwidth(w.handle(), o);
        check(MPI_Win_unlock_all(w.handle()), "MPI_Win_unlock_all");
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    return r;
}

// The two-sided reference: median round trip of 8 bytes between ranks 0 and
// 1, microseconds (on rank 0). Rank 1 sends back what it got plus one.
double round_trip_us(int rank, const options& o) {
    std::int64_t message = 0;
    const auto send = [&](int to) { check(MPI_Send(&message, 1, MPI_INT64_T, to, tag, MPI_COMM_WORLD), "MPI_Send"); };
    const auto receive = [&](int from) {
        check(MPI_Recv(&message, 1, MPI_INT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    };
    double median = 0.0;
    if (rank == origin) {
        std::int64_t expected = 0;
        median = summarize(sample(o.iterations, o.repeat, [&] {
                     message = expected;
                     send(target);
                     receive(target);
                     if (message != ++expected) fail("the round trip returned a wrong value");
                 })).median;
    } else if (rank == target) {
        const long calls = warmup_calls(o.iterations) + o.iterations * o.repeat;
        for (long i = 0; i < calls; ++i) {
            receive(origin);
            ++message;
            send(origin);
        }
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    return median * 1e6;
}

// Every rank takes part; rank 0's median time per barrier, microseconds.
double barrier_us(const options& o) {
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const auto barrier = [] { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); };
    return summarize(sample(o.iterations, o.repeat, barrier)).median * 1e6;
}

// Parses the options on every rank (all need them); only rank 0 prints help
// and errors. Returns the exit code when the program should stop.
std::optional<int> parse(int argc, char** argv, int rank, options& o) {
    CLI::App app{
        "MPI's one-sided operations (passive target, a flush after each operation) between ranks 0 and 1: "
        "8-byte latency, put and get bandwidth, against a two-sided round trip and a barrier. Run under "
        "mpiexec with at least 2 ranks."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.add_option("--iterations", o.iterations,
                   "operations per latency sample (also round trips and barriers per sample); bandwidth samples "
                   "move about this many KiB")
        ->check(CLI::Range(1L, 1L << 30));
    app.add_option("--repeat", o.repeat, "samples of each measurement")->check(CLI::Range(1, 1 << 20));
    app.add_option("--kinds", o.kinds,
                   "window kinds, comma separated: allocate (MPI_Win_allocate), create "
                   "(MPI_Win_create)")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::IsMember({"allocate", "create"}));
    app.add_flag("--json", o.json, "print one JSON object");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return rank == 0 ? app.exit(e) : e.get_exit_code();
    }
    for (auto it = o.kinds.begin(); it != o.kinds.end(); ++it) {
        if (std::find(o.kinds.begin(), it, *it) == it) continue;
        if (rank == 0) std::fprintf(stderr, "%s: --kinds names %s twice\n", program_name, it->c_str());
        return 2;
    }
    return std::nullopt;
}

void print_table(const json& out) {
    std::printf("%d ranks; latency in us, median (min) over samples\n", out["ranks"].get<int>());
    std::printf("%-9s %18s %18s %18s %18s\n", "window", "put", "get", "acc", "fetch_and_op");
    for (const auto& [kind, median] : out["latency_us"].items()) {
        std::printf("%-9s", kind.c_str());
        for (const auto& [op, value] : median.items())
            std::printf(" %9.3f (%6.3f)", value.get<double>(), out["latency_min_us"][kind][op].get<double>());
        std::printf("\n");
    }
    std::printf("\nbandwidth in GB/s (10^9 bytes per second), median\n%-13s", "window op");
    for (const std::size_t bytes : bandwidth_sizes) std::printf(" %9zu", bytes);
    std::printf("\n");
    for (const auto& [kind, ops] : out["bandwidth_GBps"].items())
        for (const auto& [op, sizes] : ops.items()) {
            std::printf("%-9s %-3s", kind.c_str(), op.c_str());
            for (const auto& [bytes, value] : sizes.items()) std::printf(" %9.3f", value.get<double>());
            std::printf("\n");
        }
    std::printf("\ntwo-sided round trip %.3f us, barrier %.3f us (medians)\n", out["round_trip_us"].get<double>(),
                out["barrier_us"].get<double>());
}

// All measurements, collective; the result is complete on rank 0 only.
json measure_all(int rank, int size, const options& o) {
    json out = {{"program", "mpi_one_sided"},      {"ranks", size},
                {"iterations", o.iterations},      {"repeat", o.repeat},
                {"latency_us", json::object()},    {"latency_min_us", json::object()},
                {"bandwidth_GBps", json::object()}};
    for (const std::string& kind : o.kinds) {
        kind_result r = measure_kind(kind, rank, o);
        out["latency_us"][kind] = std::move(r.latency);
        out["latency_min_us"][kind] = std::move(r.latency_min);
        out["bandwidth_GBps"][kind] = std::move(r.bandwidth);
    }
    out["round_trip_us"] = round_trip_us(rank, o);
    out["barrier_us"] = barrier_us(o);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o;
    std::optional<int> stop = parse(argc, argv, rank, o);
    if (!stop && size < 2) {
        if (rank == 0) std::fprintf(stderr, "%s: needs at least 2 ranks (0 the origin, 1 the target)\n", program_name);
        stop = 2;
    }
    if (stop) {
        MPI_Finalize();
        return *stop;
    }
    const json out = measure_all(rank, size, o);
    if (rank == 0) {
        if (o.json)
            std::printf("%s\n", out.dump().c_str());
        else
            print_table(out);
        std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
