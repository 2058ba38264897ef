// The failure experiments of rampart-bench-pgas (see bench_pgas.cpp).

#include <rampart/comm/comm.hpp>
#include <rampart/pgas/array.hpp>
#include <rampart/pgas/barrier.hpp>
#include <rampart/pgas/failures.hpp>

#include "bench_pgas.hpp"

#include <csignal>
#include <cstdint>
#include <thread>

namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count();
}

bool is_dead(int r) {
    const auto d = pg::dead_ranks();
    return std::find(d.begin(), d.end(), r) != d.end();
}

void busy_wait_us(long us) {
    const auto end = clock_type::now() + std::chrono::microseconds(us);
    while (clock_type::now() < end) {
    }
}

// Each living rank's row of `per_rank` values, gathered on every rank
// through an array (rows of dead ranks: empty).
std::vector<std::vector<double>> gather(pg::array<double>& rows, const std::vector<double>& mine) {
    const int p = rampart::comm::size(), me = rampart::comm::rank();
    const auto n = static_cast<std::int64_t>(mine.size());
    rows.put({{me, 0}, {me + 1, n}}, mine);
    rows.sync();
    std::vector<std::vector<double>> all(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
        if (!is_dead(r)) all[static_cast<std::size_t>(r)] = rows.get({{r, 0}, {r + 1, n}}).get();
    return all;
}

}  // namespace

json fault_experiment(const options& o) {
    const int p = rampart::comm::size(), me = rampart::comm::rank();
    const auto per_block = static_cast<std::int64_t>(o.bytes / 8);
    pg::array<double> ring("ring", per_block * p);
    pg::array<double> rows("latencies", p, o.iterations);
    const int next = (me + 1) % p;
    const auto q = pg::patch::range(next * per_block, (next + 1) * per_block);
    std::vector<double> buf(static_cast<std::size_t>(per_block), 1.0), lat;
    pg::barrier();
    for (long it = 0; it < o.iterations; ++it) {
        if (me == o.kill_rank && it == o.kill_at) std::raise(SIGKILL);
        const auto t0 = clock_type::now();
        if (o.op == "put") {
            ring.put(q, buf);
        } else {
            ring.get(q, std::span<double>(buf));
        }
        ring.fence();
        lat.push_back(std::chrono::duration<double>(clock_type::now() - t0).count() * 1e6);
        busy_wait_us(o.gap_us);
    }
    const auto all = gather(rows, lat);
    json out{{"op", o.op}, {"bytes", o.bytes}, {"kill_rank", o.kill_rank}, {"kill_at", o.kill_at},
             {"gap_us", o.gap_us}};
    std::vector<double> med, mx;
    for (long it = 0; it < o.iterations; ++it) {
        std::vector<double> v;
        for (const auto& row : all)
            if (!row.empty()) v.push_back(row[static_cast<std::size_t>(it)]);
        med.push_back(median(v));
        mx.push_back(*std::max_element(v.begin(), v.end()));
    }
    out["median_us"] = med;
    out["max_us"] = mx;
    // The rank whose ring target died: its first calls after the kill.
    const int toucher = (o.kill_rank + p - 1) % p;
    if (o.kill_at >= 0 && !all[static_cast<std::size_t>(toucher)].empty())
        out["toucher_us"] = all[static_cast<std::size_t>(toucher)];
    return out;
}

json detection(const options& o) {
    const int p = rampart::comm::size(), me = rampart::comm::rank();
    pg::array<std::int64_t> clock("kill_clock", p);
    pg::array<double> rows("noticed", p, 1);
    pg::barrier();
    if (me == o.kill_rank) {
        clock.put(pg::patch::element(me), std::vector<std::int64_t>{now_ns()});
        std::raise(SIGKILL);
    }
    const auto deadline = clock_type::now() + std::chrono::seconds(30);
    std::optional<clock_type::time_point> noticed;
    while (!(noticed = pg::death_noticed(o.kill_rank)) && clock_type::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    const auto killed = clock.get(pg::patch::element(o.kill_rank)).get().at(0);
    const double ms =
        noticed ? static_cast<double>(noticed->time_since_epoch().count() - killed) / 1e6 : -1.0;
    const auto all = gather(rows, {ms});
    std::vector<double> per_rank;
    for (const auto& row : all)
        if (!row.empty()) per_rank.push_back(row[0]);
    return {{"every_survivor_ms", *std::max_element(per_rank.begin(), per_rank.end())}, {"per_rank_ms", per_rank}};
}
