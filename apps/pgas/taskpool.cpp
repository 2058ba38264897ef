// rampart-taskpool: a dynamic pool of tasks over a distributed array, in the
// manner of Global Arrays programs: each rank takes the next task from a
// shared counter (read_inc), computes it and puts its results into a row of
// the array. Run by rampart-run with --kill and no spares, the survivors do
// the tasks that dead ranks had taken and not finished (rampart's task pool
// hands them out), and the checksum of the results is the fault-free one,
// bit for bit.
//
//   tools/rampart-run -n 4 --kill 2@iter30 -- build/apps/rampart-taskpool --json

#include <rampart/pgas/task_pool.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/task/runtime.hpp>

#include "../common/mix.hpp"
#include "../common/options.hpp"
#include "program.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

struct options {
    std::int64_t tasks = 400;
    std::int64_t width = 16;
    std::int64_t work = 20000;
    std::uint64_t seed = 7;
    bool json = false;
};

// A task's results: `width` values, each from `work` steps of a map that
// depends on the task's number alone.
std::vector<double> compute(const options& o, std::int64_t task) {
    std::vector<double> row(static_cast<std::size_t>(o.width));
    for (std::int64_t w = 0; w < o.width; ++w) {
        const auto bits = rampart::apps::mix(o.seed ^ rampart::apps::mix(static_cast<std::uint64_t>(task * o.width + w)));
        double x = static_cast<double>(bits >> 11) * 0x1.0p-53;
        for (std::int64_t s = 0; s < o.work; ++s) x = 3.99 * x * (1.0 - x);  // the logistic map
        row[static_cast<std::size_t>(w)] = x;
    }
    return row;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"rampart-taskpool: a dynamic task pool on a fault-tolerant distributed array"};
    app.add_option("--tasks", o.tasks, "tasks")->check(rampart::apps::positive);
    app.add_option("--width", o.width, "results per task")->check(rampart::apps::positive);
    app.add_option("--work", o.work, "steps per result (the cost of a task)")->check(rampart::apps::positive);
    app.add_option("--seed", o.seed, "seed of the tasks");
    app.add_flag("--json", o.json, "end the output with one JSON object");
    CLI11_PARSE(app, argc, argv);

    rampart::runtime rt(1);
    namespace pg = rampart::pgas;
    pg::array<double> results("results", o.tasks, o.width);
    pg::task_pool pool("tasks", o.tasks);
    std::uint64_t done_here = 0;
    while (auto t = pool.next()) {
        rampart::recovery::report_iteration(done_here++);  // --kill R@iterN
        results.put({{*t, 0}, {*t + 1, o.width}}, compute(o, *t));
        pool.done(*t);
    }
    results.sync();
    if (pool.taken_over() > 0)
        std::printf("rank %d: took over %lld tasks of dead ranks\n", rampart::comm::rank(),
                    static_cast<long long>(pool.taken_over()));
    const auto sum = rampart::apps::checksum(results);
    if (rampart::apps::prints()) {
        const auto dead = pg::dead_ranks();
        rampart::apps::finish("taskpool: " + std::to_string(o.tasks) + " tasks on " +
                                  std::to_string(rampart::comm::size() - static_cast<int>(dead.size())) +
                                  " living ranks, checksum " + sum,
                              {{"program", "taskpool"}, {"tasks", o.tasks}, {"dead_ranks", dead},
                               {"checksum", sum}},
                              o.json);
    }
    return 0;
}
