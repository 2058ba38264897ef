#include <rampart/resilience/errors.hpp>
#include <rampart/task/counters.hpp>
#include <rampart/task/runtime.hpp>
#include <rampart/task/runtime_hooks.hpp>

namespace rampart {

replay_exhausted::replay_exhausted(std::size_t attempts, const std::string& last)
    : task_failed("rampart: task failed in all " + std::to_string(attempts) + " attempts; last failure: ", last),
      attempts_(attempts) {}

replicate_failed::replicate_failed(std::size_t replicas, const std::string& last)
    : task_failed("rampart: all " + std::to_string(replicas) + " replicas failed; last failure: ", last) {}

validation_failed::validation_failed() : error("rampart: result rejected by its validator") {}

validator_error::validator_error(const std::string& what_it_threw)
    : error("rampart: the validator threw instead of answering: " + what_it_threw) {}

vote_failed::vote_failed(std::size_t results)
    : error("rampart: the vote over " + std::to_string(results) + " replica results found no majority") {}

injected_fault::injected_fault() : error("rampart: injected fault") {}

namespace detail {

std::string failure_cause(const std::exception_ptr& e) {
    try {
        if (e) std::rethrow_exception(e);
    } catch (const task_failed& x) {
        return x.cause();
    } catch (...) {}
    return describe(e);
}

}  // namespace detail
std::exception_ptr detail::failed_for_good(std::exception_ptr e) {
    count(&counter_slot::exhausted);
    task_failed_for_good(e);
    return e;
}

}  // namespace rampart
