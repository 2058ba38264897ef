// Resilient tasks, the README's example: a task replayed when it throws or
// its result fails validation, three copies of a task whose majority vote
// hides a silently corrupted copy, and a dataflow task that combines them.
// The fault injector's seed makes one attempt throw and corrupts one copy;
// the counters show both handled.
//
//   build/apps/examples/rampart-quickstart
//
// Prints: result 42.0, counters {..., "replays":1, ..., "votes_lost":1, ...}
#include <rampart/rampart.hpp>

#include <cmath>
#include <cstdio>

int main() {
    rampart::runtime rt;                               // a oneTBB arena on all cores (or RAMPART_THREADS)
    rampart::fault_injector inject(0.2, /*seed=*/22);  // faults at a 20% rate

    // Replayed up to 5 times if it throws or its result fails validation.
    auto a = rampart::async_replay_validate(
        5, [](double r) { return std::isfinite(r); },
        [&](double x) {
            inject.maybe_throw(1);
            return std::sqrt(x);
        },
        2.0);

    // Three copies at once; a majority vote hides a silently corrupted one,
    // and without a majority the copies run again (up to 3 rounds).
    auto b = rampart::async_replicate_replay(3, 3, rampart::majority_vote{}, [&] {
        double v = 40.0;
        inject.maybe_flip_bit(v, 2);  // silent corruption in some copies
        return v;
    });

    // Runs when a and b are ready; replayed on failure.
    auto c = rampart::dataflow_replay(
        3, [](auto a, auto b) { return a.get() * a.get() + b.get(); }, std::move(a), std::move(b));

    double result = c.get();  // waits; read the counters after it
    std::printf("result %.1f, counters %s\n", result, rampart::read_counters().to_json().c_str());
}
