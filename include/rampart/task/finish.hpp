#pragma once

#include <rampart/task/detail/scheduler.hpp>

#include <utility>

namespace rampart {

/// Runs body, then waits until every task created inside it has finished,
/// including tasks created by those tasks (the HClib `finish`).
///
///     rampart::finish([&] {
///         for (int i = 0; i < n; ++i) rampart::async([&, i] { out[i] = f(i); });
///     });   // all out[i] are written here
///
/// Exceptions of the tasks stay in their futures; an exception thrown by body
/// itself is rethrown after the wait.
template <class F>
void finish(F&& body) {
    detail::finish_scope scope;
    detail::finish_scope* saved = detail::scheduler::current_finish();
    detail::scheduler::current_finish() = &scope;
    try {
        std::forward<F>(body)();
    } catch (...) {
        detail::scheduler::current_finish() = saved;
        scope.wait();
        throw;
    }
    detail::scheduler::current_finish() = saved;
    scope.wait();
}

}  // namespace rampart
