#pragma once

#include <type_traits>

namespace rampart {

/// An executor decides how a task runs (plain, replayed, replicated). It has
/// `async_execute(f, args...)` and `dataflow_execute(f, inputs...)`, and marks
/// itself with `using is_rampart_executor = void;`.
template <class E>
concept executor = requires {
    typename std::remove_cvref_t<E>::is_rampart_executor;
};

}  // namespace rampart
