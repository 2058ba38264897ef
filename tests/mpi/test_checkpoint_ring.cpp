// A ring exchange with checkpoints of the channel counts, at the engine's
// level (the store's checkpoint API builds on it). Every iteration each rank
// sends its vector to both neighbours and mixes in theirs. Every `every`
// iterations, where no receive is pending, each rank snapshots its channels
// and writes its state and the snapshot to a file in `dir` (the stand-in for
// the store), waits until every rank has written that checkpoint (the
// commit), and trims its send log. A replacement (rampart-run --spares 1
// --kill 1@iter35) loads the newest checkpoint every rank has written,
// restores its channels and resumes from there.
//
// usage: checkpoint_ring DIR ITERATIONS EVERY DOUBLES [--forget]
//   EVERY 0: no checkpoints. --forget: a replacement ignores the checkpoints
//   and starts from the beginning, which the trimmed logs cannot serve: its
//   receives must fail with a clear error (it then aborts, and the job fails).
// Prints per rank: "rank R checksum H", and "rank R send log peak B bound M";
// a replacement also "rank R resumed at iteration I".
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/recovery/recovery.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using rampart::recovery::channel_state;

namespace {

constexpr int tag_right = 1, tag_left = 2;  // the direction a message travels

fs::path file_of(const fs::path& dir, std::uint64_t iteration, int rank) {
    return dir / ("checkpoint." + std::to_string(iteration) + "." + std::to_string(rank));
}

void write_checkpoint(const fs::path& dir, std::uint64_t iteration, int rank, const std::vector<double>& x,
                      const std::vector<char>& channels) {
    const fs::path tmp = file_of(dir, iteration, rank).string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary);
        const std::uint64_t n = x.size(), c = channels.size();
        out.write(reinterpret_cast<const char*>(&iteration), sizeof iteration);
        out.write(reinterpret_cast<const char*>(&n), sizeof n);
        out.write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(n * sizeof(double)));
        out.write(reinterpret_cast<const char*>(&c), sizeof c);
        out.write(channels.data(), static_cast<std::streamsize>(c));
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, file_of(dir, iteration, rank));  // whole or not at all
}

bool read_checkpoint(const fs::path& dir, std::uint64_t iteration, int rank, std::vector<double>& x,
                     std::vector<char>& channels) {
    std::ifstream in(file_of(dir, iteration, rank), std::ios::binary);
    std::uint64_t it = 0, n = 0, c = 0;
    in.read(reinterpret_cast<char*>(&it), sizeof it);
    in.read(reinterpret_cast<char*>(&n), sizeof n);
    if (!in || it != iteration || n != x.size()) return false;
    in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(n * sizeof(double)));
    in.read(reinterpret_cast<char*>(&c), sizeof c);
    if (!in || c > (1u << 20)) return false;
    channels.resize(c);
    in.read(channels.data(), static_cast<std::streamsize>(c));
    return static_cast<bool>(in);
}

bool committed(const fs::path& dir, std::uint64_t iteration, int ranks) {
    for (int r = 0; r < ranks; ++r)
        if (!fs::exists(file_of(dir, iteration, r))) return false;
    return true;
}

std::uint64_t checksum(const std::vector<double>& x) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto* p = reinterpret_cast<const unsigned char*>(x.data());
    for (std::size_t i = 0; i < x.size() * sizeof(double); ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"A ring exchange with checkpoints of the channel counts, written to files in DIR."};
    std::string dir_name;
    std::uint64_t iterations = 0, every = 0;
    std::size_t doubles = 0;
    bool forget = false;
    app.add_option("dir", dir_name, "where the checkpoints go")->required();
    app.add_option("iterations", iterations, "iterations of the ring")->required();
    app.add_option("every", every, "iterations between checkpoints (0: none)")->required();
    app.add_option("doubles", doubles, "doubles per message")
        ->required()
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_flag("--forget", forget, "a replacement ignores the checkpoints");
    CLI11_PARSE(app, argc, argv);
    const fs::path dir = dir_name;

    rampart::runtime rt;
    const int me = rampart::comm::rank(), n = rampart::comm::size();
    const int right = (me + 1) % n, left = (me + n - 1) % n;

    std::vector<double> x(doubles);
    for (std::size_t i = 0; i < doubles; ++i) x[i] = std::sin(0.001 * static_cast<double>(i) + me);
    std::uint64_t start = 0;
    if (rampart::recovery::incarnation() > 0 && every > 0 && !forget) {
        // The newest checkpoint that every rank has written.
        for (std::uint64_t c = iterations / every * every; c > 0; c -= every) {
            std::vector<char> bytes;
            std::vector<double> saved(doubles);
            if (!committed(dir, c, n) || !read_checkpoint(dir, c, me, saved, bytes)) continue;
            rampart::recovery::restore_channels(channel_state::from_bytes(bytes));
            x = std::move(saved);
            start = c;
            std::printf("rank %d resumed at iteration %llu\n", me, static_cast<unsigned long long>(c));
            break;
        }
    }

    const std::uint64_t message_bytes = sizeof(rampart::comm::detail::envelope) + doubles * sizeof(double);
    // Between two trims a rank logs at most the messages of the iterations
    // since the last checkpoint, plus those run while the commit waits.
    const std::uint64_t bound = every > 0 ? 2 * (2 * every + 2) * message_bytes : ~std::uint64_t{0};
    std::uint64_t peak = 0;
    try {
        for (std::uint64_t it = start; it < iterations; ++it) {
            rampart::recovery::report_iteration(it);
            auto to_right = rampart::comm::isend(right, tag_right, x);
            auto to_left = rampart::comm::isend(left, tag_left, x);
            auto from_left = rampart::comm::irecv<std::vector<double>>(left, tag_right);
            auto from_right = rampart::comm::irecv<std::vector<double>>(right, tag_left);
            const std::vector<double> l = from_left.get(), r = from_right.get();
            to_right.get();
            to_left.get();
            for (std::size_t i = 0; i < doubles; ++i) x[i] = 0.5 * x[i] + 0.25 * (l[i] + r[i]) + 1e-3 * std::cos(x[i]);
            peak = std::max(peak, rampart::comm::counters().send_log_bytes);

            if (every > 0 && (it + 1) % every == 0 && it + 1 < iterations) {
                const channel_state channels = rampart::recovery::snapshot_channels();  // nothing is pending here
                write_checkpoint(dir, it + 1, me, x, channels.to_bytes());
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
                while (!committed(dir, it + 1, n)) {
                    if (std::chrono::steady_clock::now() > deadline) {
                        std::printf("rank %d: FAIL: checkpoint %llu never committed\n", me,
                                    static_cast<unsigned long long>(it + 1));
                        std::fflush(stdout);
                        std::abort();
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                rampart::recovery::trim_send_log(channels);
            }
        }
    } catch (const rampart::comm::comm_error& x) {
        std::printf("rank %d (incarnation %d) failed: %s\n", me, rampart::recovery::incarnation(), x.what());
        std::fflush(stdout);
        // A crash, so that the others notice (an exit would leave its
        // neighbours waiting; and a rank that returns leaves its unreceived
        // 8 KB sends pending, which keeps the engine from ending): with no
        // spare left, every receive of the others fails in turn.
        std::abort();
    }
    std::printf("rank %d checksum %016llx\n", me, static_cast<unsigned long long>(checksum(x)));
    std::printf("rank %d send log peak %llu bound %llu\n", me, static_cast<unsigned long long>(peak),
                static_cast<unsigned long long>(bound));
    if (peak > bound)
        std::printf("rank %d: FAIL: the send log grew to %llu bytes\n", me, static_cast<unsigned long long>(peak));
    return 0;
}
