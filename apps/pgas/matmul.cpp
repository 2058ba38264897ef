// rampart-matmul: C = A B on fault-tolerant distributed arrays, in the
// manner of Global Arrays' SRUMMA: C is cut into tiles; each rank takes
// tiles from a task pool, fetches the panels of A and B it needs with
// one-sided gets, multiplies them locally and writes its tile of C. The
// sum over k runs in one fixed order for every tile, so that C is the same
// bit for bit wherever and however often a tile is computed. A tile is
// written with one put, not accumulated: a tile whose rank died before it
// said done is computed again by a survivor, and a put repeats where an
// accumulation would add twice. Run by rampart-run with --kill and no
// spares, the checksum of C is the fault-free one.
//
//   tools/rampart-run -n 4 --kill 1@iter3 -- build/apps/rampart-matmul --n 256 --json

#include <rampart/pgas/task_pool.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/task/runtime.hpp>

#include "../common/mix.hpp"
#include "../common/options.hpp"
#include "program.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <vector>

namespace {

namespace pg = rampart::pgas;

struct options {
    std::int64_t n = 256;
    std::int64_t tile = 32;
    std::uint64_t seed = 11;
    bool verify = false;
    bool json = false;
};

double input(const options& o, int which, std::int64_t i, std::int64_t j) {
    const auto bits = rampart::apps::mix(o.seed ^ rampart::apps::mix(static_cast<std::uint64_t>((which * o.n + i) * o.n + j)));
    return static_cast<double>(bits >> 11) * 0x1.0p-53 - 0.5;
}

// The blocks of A and B are written as tasks of a pool, so that the blocks
// of a rank that dies before it wrote them are written by another.
void fill(const options& o, pg::array<double>& a, pg::array<double>& b) {
    const int blocks = a.layout().blocks();
    pg::task_pool pool("fill", 2 * blocks);
    while (auto t = pool.next()) {
        const int which = static_cast<int>(*t / blocks);
        auto& m = which == 0 ? a : b;
        const auto p = m.layout().block_patch(static_cast<int>(*t % blocks));
        std::vector<double> v;
        for (auto i = p.lo[0]; i < p.hi[0]; ++i)
            for (auto j = p.lo[1]; j < p.hi[1]; ++j) v.push_back(input(o, which, i, j));
        m.put(p, v);
        pool.done(*t);
    }
}

// C's tile (ti, tj) = A's row panel times B's column panel, k ascending.
std::vector<double> tile_product(const options& o, const pg::array<double>& a, const pg::array<double>& b,
                                 const pg::patch& c_tile) {
    const pg::patch rows{{c_tile.lo[0], 0}, {c_tile.hi[0], o.n}}, cols{{0, c_tile.lo[1]}, {o.n, c_tile.hi[1]}};
    const auto ap = a.get(rows).get(), bp = b.get(cols).get();
    const auto h = c_tile.rows(), w = c_tile.cols();
    std::vector<double> c(static_cast<std::size_t>(h * w), 0.0);
    for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t k = 0; k < o.n; ++k) {
            const double aik = ap[static_cast<std::size_t>(i * o.n + k)];
            for (std::int64_t j = 0; j < w; ++j)
                c[static_cast<std::size_t>(i * w + j)] += aik * bp[static_cast<std::size_t>(k * w + j)];
        }
    return c;
}

pg::patch tile_of(const options& o, std::int64_t t) {
    const std::int64_t per_row = (o.n + o.tile - 1) / o.tile, ti = t / per_row, tj = t % per_row;
    return {{ti * o.tile, tj * o.tile}, {std::min(o.n, (ti + 1) * o.tile), std::min(o.n, (tj + 1) * o.tile)}};
}

// The same product in this process alone, the same order of sums.
bool verify(const options& o, const pg::array<double>& c) {
    const auto got = c.get(c.layout().whole()).get();
    for (std::int64_t i = 0; i < o.n; ++i)
        for (std::int64_t j = 0; j < o.n; ++j) {
            double s = 0.0;
            for (std::int64_t k = 0; k < o.n; ++k) s += input(o, 0, i, k) * input(o, 1, k, j);
            if (s != got[static_cast<std::size_t>(i * o.n + j)]) return false;
        }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"rampart-matmul: C = A B on fault-tolerant distributed arrays"};
    app.add_option("--n", o.n, "rows and columns of the matrices")->check(rampart::apps::positive);
    app.add_option("--tile", o.tile, "rows and columns of a tile of C (the unit of work)")->check(rampart::apps::positive);
    app.add_option("--seed", o.seed, "seed of A and B");
    app.add_flag("--verify", o.verify, "compare C with the product computed by one rank");
    app.add_flag("--json", o.json, "end the output with one JSON object");
    CLI11_PARSE(app, argc, argv);

    rampart::runtime rt(1);
    pg::array<double> a("A", o.n, o.n), b("B", o.n, o.n), c("C", o.n, o.n);
    fill(o, a, b);
    const std::int64_t per_row = (o.n + o.tile - 1) / o.tile;
    pg::task_pool pool("tiles", per_row * per_row);
    std::uint64_t done_here = 0;
    while (auto t = pool.next()) {
        rampart::recovery::report_iteration(done_here++);  // --kill R@iterN
        const auto tile = tile_of(o, *t);
        c.put(tile, tile_product(o, a, b, tile));
        pool.done(*t);
    }
    c.sync();
    if (pool.taken_over() > 0)
        std::printf("rank %d: took over %lld tiles of dead ranks\n", rampart::comm::rank(),
                    static_cast<long long>(pool.taken_over()));
    const auto sum = rampart::apps::checksum(c);
    if (rampart::apps::prints()) {
        const auto dead = pg::dead_ranks();
        std::string line = "matmul: n " + std::to_string(o.n) + ", tile " + std::to_string(o.tile) + ", checksum " + sum;
        nlohmann::ordered_json j{{"program", "matmul"}, {"n", o.n}, {"tile", o.tile}, {"dead_ranks", dead},
                                 {"checksum", sum}};
        if (o.verify) {
            const bool same = verify(o, c);
            line += same ? ", same as one rank's product" : ", DIFFERS from one rank's product";
            j["verified"] = same;
        }
        rampart::apps::finish(line, j, o.json);
    }
    return 0;
}
