// The task pool (see rampart/pgas/task_pool.hpp). First every task is
// taken once: task r by rank r, the others from the counter. Then, in rounds, the living ranks meet in the
// fault-tolerant barrier, read which tasks are not done (the tasks of ranks
// that died), meet again (so that all have read the same flags) and share
// them out; the pool ends when a round finds none.
// Ranks that see different deaths in a round may run a task twice or not at
// all; the next round sees what is still not done, and a round in which
// nobody new died shares out alike on every rank.

#include <rampart/pgas/failures.hpp>
#include <rampart/pgas/task_pool.hpp>

#include <algorithm>

namespace rampart::pgas {

task_pool::task_pool(std::string name, std::int64_t tasks)
    : name_(std::move(name)),
      tasks_(tasks),
      counter_(name_ + ".counter", 1),
      done_(name_ + ".done", std::max<std::int64_t>(tasks, 1)),
      first_tasks_(std::min<std::int64_t>(tasks, comm::size())) {
    if (tasks < 0)
        throw rampart::invalid_argument("rampart::pgas::task_pool '" + name_ + "': " + std::to_string(tasks) +
                                        " tasks");
}

void task_pool::done(std::int64_t task) {
    if (task < 0 || task >= tasks_)
        throw rampart::invalid_argument("rampart::pgas::task_pool '" + name_ + "': task " + std::to_string(task) +
                                        " is not in [0, " + std::to_string(tasks_) + ")");
    done_.put(patch::element(task), std::vector<std::int8_t>{1});
}

void task_pool::share_out_orphans() {
    barrier();  // every living rank has marked done what it did
    const auto flags = done_.get(done_.layout().whole()).get();
    // Every rank has read the same flags before anyone does a task of this
    // round (else a fast rank's "done" could end the pool for a slow reader
    // only).
    barrier();
    std::vector<std::int64_t> orphans;
    for (std::int64_t t = 0; t < tasks_; ++t)
        if (!flags[static_cast<std::size_t>(t)]) orphans.push_back(t);
    if (orphans.empty()) return;
    const auto dead = dead_ranks();
    std::vector<int> living;
    for (int r = 0; r < comm::size(); ++r)
        if (!std::binary_search(dead.begin(), dead.end(), r)) living.push_back(r);
    const auto me = std::find(living.begin(), living.end(), comm::rank()) - living.begin();
    for (std::size_t i = 0; i < orphans.size(); ++i)
        if (static_cast<std::ptrdiff_t>(i % living.size()) == me) mine_.push_back(orphans[i]);
    taken_over_ += static_cast<std::int64_t>(mine_.size());
    if (mine_.empty()) mine_.push_back(-1);  // nothing for this rank this round: meet again
}

std::optional<std::int64_t> task_pool::next() {
    if (!first_taken_) {  // task r is rank r's first: every rank starts with one, whoever is fastest
        first_taken_ = true;
        if (comm::rank() < tasks_) return comm::rank();
    }
    if (!counter_empty_) {
        const std::int64_t t = first_tasks_ + counter_.read_inc(0, 1);
        if (t < tasks_) return t;
        counter_empty_ = true;
    }
    while (true) {
        while (!mine_.empty()) {
            const auto t = mine_.front();
            mine_.pop_front();
            if (t >= 0) return t;
        }
        share_out_orphans();
        if (mine_.empty()) return std::nullopt;
    }
}

}  // namespace rampart::pgas
