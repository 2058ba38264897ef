// Ping-pong between ranks 0 and 1 over message sizes from 1 byte to 4 MiB:
// the latency (half a round trip) and the bandwidth of each size, as
// NetPIPE measures them. Other ranks wait at the final barrier. A plain
// MPI program: process replication runs it unchanged.

#include "result.hpp"

#include <mpi.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct row {
    std::size_t bytes = 0;
    int round_trips = 0;
    double latency_us = 0.0, bandwidth_mb_s = 0.0;
};

// Round trips of `bytes` between ranks 0 and 1; the data differ each time,
// and rank 0 adds what comes back to `sum`.
row measure(std::size_t bytes, int round_trips, int rank, std::vector<char>& buf, std::uint64_t& sum) {
    const int count = static_cast<int>(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int t = 0; t < round_trips; ++t) {
        if (rank == 0) {
            std::fill_n(buf.begin(), std::min<std::size_t>(bytes, 8), static_cast<char>(t));
            MPI_Send(buf.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf.data(), count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            sum = mpi_programs::checksum(buf.data(), std::min<std::size_t>(bytes, 64), sum);
        } else if (rank == 1) {
            MPI_Recv(buf.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (bytes > 0) buf[bytes - 1] = static_cast<char>(buf[bytes - 1] + 1);
            MPI_Send(buf.data(), count, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    const double seconds = MPI_Wtime() - start;
    row r;
    r.bytes = bytes;
    r.round_trips = round_trips;
    r.latency_us = seconds / round_trips / 2.0 * 1e6;
    r.bandwidth_mb_s = static_cast<double>(bytes) / (r.latency_us * 1e-6) / 1e6;
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"ping-pong latency and bandwidth over message sizes (plain MPI)"};
    std::size_t min_bytes = 1, max_bytes = 4u << 20;
    double scale = 1.0;
    bool json = false;
    double start_at = 0.0;
    app.add_option("--min-bytes", min_bytes, "smallest message")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_option("--max-bytes", max_bytes, "largest message")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30));
    app.add_option("--scale", scale, "multiplies the round trips of every size")->check(CLI::Range(0.001, 1000.0));
    app.add_option("--start-at", start_at,
                   "wall-clock time (seconds since the Unix epoch) at which the sweep starts, so that jobs run "
                   "together measure together");
    app.add_flag("--json", json, "print the result as one JSON object");
    CLI11_PARSE(app, argc, argv);

    const auto [rank, size] = mpi_programs::start(argc, argv);
    if (size < 2) {
        std::fprintf(stderr, "pingpong needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    std::vector<char> buf(max_bytes);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 31 + 7);
    std::uint64_t sum = mpi_programs::checksum(nullptr, 0);
    if (start_at > 0.0)
        std::this_thread::sleep_until(std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(start_at))));
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
        // Fewer round trips for larger messages: about 64 MiB each way.
        const int trips = std::max(10, static_cast<int>(scale * std::min<double>(2000.0, 64.0 * (1 << 20) / bytes)));
        measure(bytes, std::max(2, trips / 10), rank, buf, sum);  // a warm-up (its data count in the checksum)
        const row r = measure(bytes, trips, rank, buf, sum);
        rows.push_back({{"bytes", r.bytes},
                        {"round_trips", r.round_trips},
                        {"latency_us", r.latency_us},
                        {"bandwidth_mb_s", r.bandwidth_mb_s}});
        if (!json && rank == 0)
            std::printf("%10zu bytes  %10.2f us  %10.1f MB/s\n", r.bytes, r.latency_us, r.bandwidth_mb_s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_programs::report(json, "pingpong", sum, {{"ranks", size}, {"sizes", rows}});
    MPI_Finalize();
    return 0;
}
