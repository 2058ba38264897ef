#pragma once
// A dynamic pool of tasks 0..n-1 over the ranks, the load balancing of
// Global Arrays programs (rank r starts with task r, then each takes the
// next from a shared counter with read_inc), that
// survives the death of ranks: a task that a dead rank took and had not
// marked done is handed to a survivor, so that every task is done. The
// program learns of nothing; a task may then run twice (its first run died
// with its rank before it said done), so a task must write its results in a
// way that a second run repeats (put, not acc).
//
//     rampart::pgas::task_pool pool("tiles", tiles);          // collective
//     while (auto t = pool.next()) {
//         results.put(tile_patch(*t), compute(*t));
//         pool.done(*t);
//     }                                                      // every task done, on every rank

#include <rampart/pgas/array.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>

namespace rampart::pgas {

class task_pool {
public:
    /// Collective: a pool of `tasks` tasks.
    task_pool(std::string name, std::int64_t tasks);

    /// The next task for this rank; empty once every task is done, on every
    /// living rank (the last call is collective: it waits for the others).
    std::optional<std::int64_t> next();
    /// Marks a task done, after its results were written.
    void done(std::int64_t task);

    std::int64_t tasks() const noexcept { return tasks_; }
    /// The tasks this rank took over from dead ranks.
    std::int64_t taken_over() const noexcept { return taken_over_; }

private:
    void share_out_orphans();

    std::string name_;
    std::int64_t tasks_;
    array<std::int64_t> counter_;
    array<std::int8_t> done_;
    std::int64_t first_tasks_;  // tasks 0..first_tasks_-1 go to ranks 0.. first, the rest through the counter
    std::deque<std::int64_t> mine_;
    bool first_taken_ = false;
    bool counter_empty_ = false;
    std::int64_t taken_over_ = 0;
};

}  // namespace rampart::pgas
