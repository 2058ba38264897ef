#pragma once
// The base exceptions of rampart. Every layer derives its errors from these,
// so `catch (const rampart::error&)` catches any failure of the runtime and
// `catch (const std::invalid_argument&)` any argument it refused.

#include <exception>
#include <stdexcept>
#include <string>

namespace rampart {

/// Base of every rampart runtime error.
///
///     try { run(); } catch (const rampart::error& e) { std::fprintf(stderr, "%s\n", e.what()); }
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An argument that cannot work: a thread count below zero, a replay count of
/// 0, a malformed RAMPART_* variable, a rank out of range, and so on.
class invalid_argument : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// The what() of the exception in `e`, for messages ("no exception" for
/// none, a fixed text for one not derived from std::exception).
///
///     std::fprintf(stderr, "failed: %s\n", rampart::describe(std::current_exception()).c_str());
std::string describe(const std::exception_ptr& e);

}  // namespace rampart
