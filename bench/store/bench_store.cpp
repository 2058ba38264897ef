// rampart-bench-store: the isolated evaluation of the restore paper (VI-B2,
// VI-D1) for rampart::store, under mpiexec:
//
//   submit           every rank submits --bytes-per-pe bytes (its blocks are
//                    the contiguous ids [rank * n, (rank + 1) * n)); each
//                    repetition submits a new version;
//   load_one_pe      rank 0 plays the failed PE: the other ranks load its
//                    blocks, each an equal contiguous share (rank 0 asks for
//                    nothing; --one-pe-to all spreads them over every rank, as
//                    the paper's "load data" does);
//   load_all         rank i loads the blocks of rank (i + 1) % p: all data,
//                    no rank gets its own back;
//   load_one_pe_into, load_all_into
//                    the same loads into memory of the program's (the
//                    store::load overload with a span): one array per rank,
//                    allocated once and reused, as a program restores its own
//                    arrays; it is overwritten between repetitions (untimed)
//                    so that the check sees only what the load wrote. The
//                    plain loads return a fresh std::vector, whose zero-fill
//                    and first-touch page faults are part of their time;
//   ifstream_one_pe, ifstream_all
//                    the baseline: every rank reads the bytes it loads in the
//                    two load operations from a file of its own with
//                    std::ifstream (written once, then read once to have it in
//                    the page cache).
//
// Timing: before each repetition the ranks synchronise with an empty
// store::load (collective: a rank leaves it once every rank has entered it).
// Each rank times its own call with steady_clock; a repetition's time is the
// maximum over the ranks, and the row reports the median over --repeat
// repetitions, after --warmup untimed ones. The bytes are deterministic in
// (seed, version, block id): after each timed load every rank checks what it
// got, outside the timed region, and a mismatch fails the run.
//
// Besides the times, each row has what the slowest rank spent per timed
// repetition (maximum over ranks): CPU of the calling thread (caller_cpu_ms)
// and of the communication engine's thread (engine_cpu_ms), minor page
// faults and context switches of the process; and its peak RSS. The submit
// row has store::counters().bytes_held after the last submit (maximum and
// minimum over ranks) and its ratio to r x bytes per PE.

#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/store/store.hpp>

#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace rs = rampart::store;

namespace {

using clock_type = std::chrono::steady_clock;

const std::vector<std::string> all_ops = {"submit",        "load_one_pe",     "load_all",    "load_one_pe_into",
                                          "load_all_into", "ifstream_one_pe", "ifstream_all"};
constexpr int gather_tag = 4242;

// --- the data --------------------------------------------------------------

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// The bytes of blocks [first, first + count) of `version`.
struct data_model {
    std::uint64_t seed = 1;
    std::size_t block_bytes = 64;

    void fill_block(std::uint64_t version, std::uint64_t id, char* out) const {
        const std::uint64_t base = mix(seed * 0xd6e8feb86659fd93ULL ^ version * 0xa0761d6478bd642fULL ^ id);
        std::size_t j = 0;
        for (std::uint64_t w = 0; j + 8 <= block_bytes; j += 8, ++w) {
            const std::uint64_t x = mix(base + w);
            std::memcpy(out + j, &x, 8);
        }
        if (j < block_bytes) {
            const std::uint64_t x = mix(base + block_bytes / 8);
            std::memcpy(out + j, &x, block_bytes - j);
        }
    }
    void fill(std::uint64_t version, std::uint64_t first, std::uint64_t count, char* out) const {
        for (std::uint64_t i = 0; i < count; ++i) fill_block(version, first + i, out + i * block_bytes);
    }
    // The first block of [first, first + count) whose bytes in `got` differ,
    // or count when all are right.
    std::uint64_t check(std::uint64_t version, std::uint64_t first, std::uint64_t count, const char* got) const {
        std::vector<char> want(block_bytes);
        for (std::uint64_t i = 0; i < count; ++i) {
            fill_block(version, first + i, want.data());
            if (std::memcmp(want.data(), got + i * block_bytes, block_bytes) != 0) return i;
        }
        return count;
    }
};

// --- per-rank measurements, gathered on rank 0 -----------------------------

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double engine_cpu_seconds() { return rampart::comm::counters().cpu_seconds; }

std::uint64_t peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;
}

// Minor page faults and context switches of the whole process (all threads).
struct os_events {
    double faults = 0, switches = 0;
    static os_events now() {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return {static_cast<double>(u.ru_minflt), static_cast<double>(u.ru_nvcsw + u.ru_nivcsw)};
    }
};

// What one rank measured for one operation.
struct measured {
    std::vector<double> ms;    // per timed repetition
    double bytes = 0;          // bytes this rank loaded (or submitted) per repetition
    double bytes_held = 0;     // store::counters().bytes_held afterwards
    double peak_rss = 0;       // bytes
    double caller_cpu_ms = 0;  // CPU of the calling thread per repetition (warm-up excluded)
    double engine_cpu_ms = 0;  // CPU of the communication thread per repetition
    double page_faults = 0;    // minor page faults of the process per repetition
    double switches = 0;       // context switches of the process per repetition
    double mismatches = 0;     // repetitions whose bytes were wrong

    std::vector<double> pack() const {
        std::vector<double> v = ms;
        v.insert(v.end(),
                 {bytes, bytes_held, peak_rss, caller_cpu_ms, engine_cpu_ms, page_faults, switches, mismatches});
        return v;
    }
    static measured unpack(const std::vector<double>& v, std::size_t reps) {
        measured m;
        m.ms.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(reps));
        m.bytes = v[reps];
        m.bytes_held = v[reps + 1];
        m.peak_rss = v[reps + 2];
        m.caller_cpu_ms = v[reps + 3];
        m.engine_cpu_ms = v[reps + 4];
        m.page_faults = v[reps + 5];
        m.switches = v[reps + 6];
        m.mismatches = v[reps + 7];
        return m;
    }
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// --- the benchmark ---------------------------------------------------------

struct config {
    std::uint64_t bytes_per_pe = 16 << 20;
    std::size_t block_bytes = 64;
    int replicas = 4;
    std::uint64_t permutation_range_bytes = 0;
    std::size_t repeat = 10;
    std::size_t warmup = 1;
    std::uint64_t seed = 1;
    bool one_pe_to_all = false;
    std::vector<std::string> ops;
    std::string tmpdir;
    bool json = false;
};

class bench {
public:
    explicit bench(const config& c)
        : c_(c),
          me_(rampart::comm::rank()),
          p_(rampart::comm::size()),
          per_(c.bytes_per_pe / c.block_bytes),
          total_(per_ * static_cast<std::uint64_t>(p_)),
          model_{c.seed, c.block_bytes},
          store_(c.block_bytes, rs::options{c.replicas, c.permutation_range_bytes, c.seed}) {}

    // Runs the operations; returns the number of mismatches rank 0 saw (over
    // all ranks) on rank 0, this rank's own elsewhere.
    std::uint64_t run() {
        std::uint64_t bad = 0;
        // Loads need a version: the first submit is also the warm-up of the
        // submit row (or the only submit when the row is not asked for).
        const bool want_submit = wanted("submit");
        measured sub = do_submit(want_submit ? c_.repeat : 0);
        if (want_submit) bad += report("submit", sub);
        if (wanted("load_one_pe") && one_pe_receivers() > 0) bad += report("load_one_pe", do_load(one_pe_share()));
        if (wanted("load_all")) bad += report("load_all", do_load(all_share()));
        if (wanted("load_one_pe_into") && one_pe_receivers() > 0)
            bad += report("load_one_pe_into", do_load_into(one_pe_share()));
        if (wanted("load_all_into")) bad += report("load_all_into", do_load_into(all_share()));
        if (wanted("ifstream_one_pe") && one_pe_receivers() > 0)
            bad += report("ifstream_one_pe", do_ifstream(one_pe_share(), "one"));
        if (wanted("ifstream_all")) bad += report("ifstream_all", do_ifstream(all_share(), "all"));
        return bad;
    }

private:
    bool wanted(const std::string& op) const { return std::find(c_.ops.begin(), c_.ops.end(), op) != c_.ops.end(); }
    std::uint64_t first_of(int rank) const { return per_ * static_cast<std::uint64_t>(rank); }

    int one_pe_receivers() const { return c_.one_pe_to_all ? p_ : p_ - 1; }
    // This rank's part of rank 0's blocks (empty on rank 0 unless --one-pe-to all).
    rs::id_range one_pe_share() const {
        const int m = one_pe_receivers();
        const int k = c_.one_pe_to_all ? me_ : me_ - 1;
        if (k < 0) return {0, 0};
        const std::uint64_t lo = per_ * static_cast<std::uint64_t>(k) / static_cast<std::uint64_t>(m);
        const std::uint64_t hi = per_ * static_cast<std::uint64_t>(k + 1) / static_cast<std::uint64_t>(m);
        return {first_of(0) + lo, hi - lo};
    }
    rs::id_range all_share() const { return {first_of((me_ + 1) % p_), per_}; }

    // A collective step that every rank leaves only after every rank entered it.
    void sync() { store_.load(std::span<const rs::id_range>{}); }

    template <class Step, class Check>
    measured time_reps(std::size_t warmup, std::size_t reps, Step step, Check check) {
        measured m;
        double caller = 0, engine = 0, faults = 0, switches = 0;
        for (std::size_t i = 0; i < warmup + reps; ++i) {
            sync();
            const bool timed = i >= warmup;
            const double cpu0 = thread_cpu_seconds(), eng0 = engine_cpu_seconds();
            const os_events os0 = os_events::now();
            const auto t0 = clock_type::now();
            step();
            const auto t1 = clock_type::now();
            if (timed) {
                m.ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
                caller += thread_cpu_seconds() - cpu0;
                engine += engine_cpu_seconds() - eng0;
                const os_events os1 = os_events::now();
                faults += os1.faults - os0.faults;
                switches += os1.switches - os0.switches;
            }
            if (!check()) m.mismatches += 1;
        }
        if (reps > 0) {
            m.caller_cpu_ms = 1e3 * caller / static_cast<double>(reps);
            m.engine_cpu_ms = 1e3 * engine / static_cast<double>(reps);
            m.page_faults = faults / static_cast<double>(reps);
            m.switches = switches / static_cast<double>(reps);
        }
        sync();
        m.bytes_held = static_cast<double>(store_.counters().bytes_held);
        m.peak_rss = static_cast<double>(peak_rss_bytes());
        return m;
    }

    measured do_submit(std::size_t reps) {
        std::vector<char> mine(per_ * c_.block_bytes);
        const std::uint64_t first = first_of(me_);
        std::uint64_t version = store_.version() + 1;
        // The data of the next version, made before the timed region.
        auto prepare = [&] { model_.fill(version, first, per_, mine.data()); };
        prepare();
        // At least one untimed submit: the loads need a version even without the submit row.
        measured m = time_reps(
            std::max<std::size_t>(c_.warmup, 1), reps,
            [&] {
                const std::uint64_t v =
                    store_.submit(first, std::as_bytes(std::span(mine.data(), mine.size())), total_);
                if (v != version) fail("submit returned version " + std::to_string(v));
            },
            [&] {
                ++version;
                prepare();
                return true;
            });
        m.bytes = static_cast<double>(mine.size());
        version_ = store_.version();
        return m;
    }

    measured do_load(rs::id_range share) {
        std::vector<char> got;
        std::vector<rs::id_range> ask;
        if (share.count > 0) ask.push_back(share);
        // The result is dropped after the check, so that freeing it is not timed.
        measured m = time_reps(
            c_.warmup, c_.repeat, [&] { got = store_.load(ask); },
            [&] {
                const bool ok = verify(share, got, "store::load");
                std::vector<char>().swap(got);
                return ok;
            });
        m.bytes = static_cast<double>(share.count * c_.block_bytes);
        return m;
    }

    measured do_load_into(rs::id_range share) {
        std::vector<rs::id_range> ask;
        if (share.count > 0) ask.push_back(share);
        std::vector<char> memory(share.count * c_.block_bytes);
        const auto into = std::as_writable_bytes(std::span(memory));
        measured m = time_reps(
            c_.warmup, c_.repeat, [&] { store_.load(ask, into); },
            [&] {
                const bool ok = verify(share, memory, "store::load into memory");
                std::memset(memory.data(), 0xa5, memory.size());
                return ok;
            });
        m.bytes = static_cast<double>(share.count * c_.block_bytes);
        return m;
    }

    measured do_ifstream(rs::id_range share, const char* name) {
        const std::string path = c_.tmpdir + "/rampart-bench-store." + std::to_string(::getpid()) + "." +
                                 std::to_string(me_) + "." + name + ".bin";
        struct remover {
            std::string path;
            ~remover() { std::filesystem::remove(path); }
        } cleanup{path};
        const std::size_t bytes = share.count * c_.block_bytes;
        {
            std::vector<char> data(bytes);
            model_.fill(version_, share.first, share.count, data.data());
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            out.write(data.data(), static_cast<std::streamsize>(bytes));
            if (!out) fail("cannot write " + path);
        }
        std::vector<char> got;
        auto read = [&] {
            // As store::load: a fresh buffer of the bytes, filled from the file.
            std::ifstream in(path, std::ios::binary);
            std::vector<char> buf(bytes);
            in.read(buf.data(), static_cast<std::streamsize>(bytes));
            if (!in) fail("cannot read " + path);
            got = std::move(buf);
        };
        read();  // into the page cache
        measured m = time_reps(c_.warmup, c_.repeat, read, [&] {
            const bool ok = verify(share, got, "ifstream");
            std::vector<char>().swap(got);
            return ok;
        });
        m.bytes = static_cast<double>(bytes);
        return m;
    }

    bool verify(rs::id_range share, const std::vector<char>& got, const char* what) {
        const std::size_t want = share.count * c_.block_bytes;
        if (got.size() != want) {
            std::fprintf(stderr,
                         "rampart-bench-store: rank %d: %s returned %zu bytes for blocks [%llu, %llu), not %zu\n", me_,
                         what, got.size(), static_cast<unsigned long long>(share.first),
                         static_cast<unsigned long long>(share.first + share.count), want);
            return false;
        }
        const std::uint64_t i = model_.check(version_, share.first, share.count, got.data());
        if (i == share.count) return true;
        std::fprintf(stderr, "rampart-bench-store: rank %d: %s returned wrong bytes for block %llu (version %llu)\n",
                     me_, what, static_cast<unsigned long long>(share.first + i),
                     static_cast<unsigned long long>(version_));
        return false;
    }

    [[noreturn]] void fail(const std::string& why) {
        std::fprintf(stderr, "rampart-bench-store: rank %d: %s\n", me_, why.c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
        std::abort();
    }

    // Sends this rank's measurements to rank 0, which prints the row.
    std::uint64_t report(const std::string& op, const measured& mine) {
        const std::size_t reps = mine.ms.size();
        if (me_ != 0) {
            rampart::comm::isend(0, gather_tag, mine.pack()).get();
            return static_cast<std::uint64_t>(mine.mismatches);
        }
        std::vector<measured> all{mine};
        for (int q = 1; q < p_; ++q)
            all.push_back(measured::unpack(rampart::comm::irecv<std::vector<double>>(q, gather_tag).get(), reps));
        const summary m = summarize(all);
        if (c_.json)
            std::printf("%s\n", to_json(op, mine, m).dump().c_str());
        else
            print_row(op, m);
        std::fflush(stdout);
        if (m.bad)
            std::fprintf(stderr, "rampart-bench-store: %s: %.0f repetitions returned wrong bytes\n", op.c_str(), m.bad);
        return static_cast<std::uint64_t>(m.bad);
    }

    // Over all ranks: per repetition the slowest rank's time, else maxima.
    struct summary {
        std::vector<double> per_rep;
        double bytes = 0, held = 0, held_min = 0, rss = 0, caller = 0, engine = 0, faults = 0, switches = 0, bad = 0;
    };
    static summary summarize(const std::vector<measured>& all) {
        summary m;
        m.per_rep.assign(all[0].ms.size(), 0);
        m.held_min = all[0].bytes_held;
        for (const measured& x : all) {
            for (std::size_t i = 0; i < m.per_rep.size(); ++i) m.per_rep[i] = std::max(m.per_rep[i], x.ms[i]);
            m.bytes = std::max(m.bytes, x.bytes);
            m.held = std::max(m.held, x.bytes_held);
            m.held_min = std::min(m.held_min, x.bytes_held);
            m.rss = std::max(m.rss, x.peak_rss);
            m.caller = std::max(m.caller, x.caller_cpu_ms);
            m.engine = std::max(m.engine, x.engine_cpu_ms);
            m.faults = std::max(m.faults, x.page_faults);
            m.switches = std::max(m.switches, x.switches);
            m.bad += x.mismatches;
        }
        return m;
    }

    const char* one_pe_to(const std::string& op) const {
        return op.find("one_pe") != std::string::npos ? (c_.one_pe_to_all ? "all" : "others") : "";
    }

    nlohmann::ordered_json to_json(const std::string& op, const measured& mine, const summary& m) const {
        const auto [lo, hi] = std::minmax_element(m.per_rep.begin(), m.per_rep.end());
        const double data_r = static_cast<double>(c_.bytes_per_pe) * store_.replicas();
        nlohmann::ordered_json j = {{"op", op},
                                    {"ranks", p_},
                                    {"bytes_per_pe", c_.bytes_per_pe},
                                    {"block_bytes", c_.block_bytes},
                                    {"replicas", store_.replicas()},
                                    {"permutation_range_bytes", c_.permutation_range_bytes},
                                    {"median_ms", median(m.per_rep)},
                                    {"min_ms", *lo},
                                    {"max_ms", *hi},
                                    {"rank0_median_ms", median(mine.ms)},
                                    {"timing", "max over ranks per repetition"},
                                    {"repeat", m.per_rep.size()},
                                    {"warmup", op == "submit" ? std::max<std::size_t>(c_.warmup, 1) : c_.warmup},
                                    {"bytes_per_rank", m.bytes}};
        if (*one_pe_to(op)) j["one_pe_to"] = one_pe_to(op);
        if (op == "submit") {
            j["bytes_held_per_pe"] = m.held;
            j["bytes_held_per_pe_min"] = m.held_min;
            j["held_over_r_times_data"] = m.held / data_r;
        }
        j.update(nlohmann::ordered_json{{"peak_rss_bytes", m.rss},
                                        {"caller_cpu_ms", m.caller},
                                        {"engine_cpu_ms", m.engine},
                                        {"page_faults", m.faults},
                                        {"context_switches", m.switches},
                                        {"verified", m.bad == 0},
                                        {"runs_ms", m.per_rep}});
        return j;
    }

    void print_row(const std::string& op, const summary& m) {
        if (!printed_header_) {
            std::printf("%d ranks, %llu bytes per PE, %zu-byte blocks, r = %d, %s; median of %zu, max over ranks\n", p_,
                        static_cast<unsigned long long>(c_.bytes_per_pe), c_.block_bytes, store_.replicas(),
                        c_.permutation_range_bytes
                            ? ("permutation ranges of " + std::to_string(c_.permutation_range_bytes) + " bytes").c_str()
                            : "no permutation",
                        c_.repeat);
            std::printf("%-16s %14s %11s %11s %11s %11s %11s %9s  %s\n", "op", "bytes/rank", "median ms", "min ms",
                        "max ms", "caller cpu", "engine cpu", "faults", "notes");
            printed_header_ = true;
        }
        const auto [lo, hi] = std::minmax_element(m.per_rep.begin(), m.per_rep.end());
        std::string notes;
        if (op == "submit") {
            char b[160];
            const double data_r = static_cast<double>(c_.bytes_per_pe) * store_.replicas();
            std::snprintf(b, sizeof b, "held %.0f bytes/PE = %.3f x r x data", m.held, m.held / data_r);
            notes = b;
        }
        if (*one_pe_to(op)) notes += std::string("to ") + one_pe_to(op);
        if (m.bad) notes += " MISMATCH";
        std::printf("%-16s %14.0f %11.3f %11.3f %11.3f %11.3f %11.3f %9.0f  %s\n", op.c_str(), m.bytes,
                    median(m.per_rep), *lo, *hi, m.caller, m.engine, m.faults, notes.c_str());
    }

    config c_;
    int me_, p_;
    std::uint64_t per_, total_;
    data_model model_;
    rs::store store_;
    std::uint64_t version_ = 0;
    bool printed_header_ = false;
};

void add_options(CLI::App& app, config& c, int& threads, std::string& to) {
    app.add_option("--bytes-per-pe", c.bytes_per_pe, "bytes each rank submits (a multiple of --block-bytes)")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
    app.add_option("--block-bytes", c.block_bytes, "bytes per block")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_option("--replicas", c.replicas, "copies of each block; 0: min(4, ranks)")->check(CLI::Range(0, 1 << 20));
    app.add_option("--permutation-range-bytes", c.permutation_range_bytes, "bytes per permutation range; 0: none");
    app.add_option("--repeat", c.repeat, "timed repetitions")->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20));
    app.add_option("--warmup", c.warmup, "repetitions not timed");
    app.add_option("--seed", c.seed, "seed of the data");
    app.add_option("--ops", c.ops, "operations, comma separated")
        ->delimiter(',')
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->check(CLI::IsMember(all_ops));
    app.add_option("--one-pe-to", to, "who loads rank 0's data")->check(CLI::IsMember({"others", "all"}));
    app.add_option("--threads", threads, "worker threads per rank")->check(CLI::Range(1, 4096));
    app.add_option("--tmpdir", c.tmpdir, "where the ifstream operations write their files");
    app.add_flag("--json", c.json, "one JSON object per operation");
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "Times submit, loading rank 0's data on the other ranks (load_one_pe), loading all data with no "
        "rank getting its own (load_all), both also into memory of the program's (load_one_pe_into, "
        "load_all_into), and reading the same bytes with std::ifstream. Median over the repetitions of the "
        "slowest rank's time. Run under mpiexec."};
    // An option given twice takes its last value, so that scripts can override what they pass.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    config c;
    c.ops = all_ops;
    const char* tmp = std::getenv("TMPDIR");
    c.tmpdir = tmp && *tmp ? tmp : "/tmp";
    int threads = 1;
    std::string to = "others";
    add_options(app, c, threads, to);
    CLI11_PARSE(app, argc, argv);
    if (c.bytes_per_pe % c.block_bytes != 0) {
        std::fprintf(stderr, "rampart-bench-store: --bytes-per-pe must be a multiple of --block-bytes\n");
        return 2;
    }
    c.one_pe_to_all = to == "all";
    try {
        rampart::runtime rt(threads);
        bench b(c);
        const std::uint64_t bad = b.run();
        if (bad) {
            std::fprintf(stderr, "rampart-bench-store: rank %d: FAILED: %llu repetitions returned wrong bytes\n",
                         rampart::comm::rank(), static_cast<unsigned long long>(bad));
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rampart-bench-store: %s\n", e.what());
        return 2;
    }
}
