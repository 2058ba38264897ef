#pragma once
// The untyped core of rampart::pgas::array<T>: blocks of bytes, their two
// copies, and the operations on patches (src/pgas/array_core.cpp). The
// typed front end (array.hpp) checks types and sizes and passes the
// element's arithmetic as plain functions.

#include <rampart/pgas/distribution.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rampart::pgas {

/// What an array did about failures, on this rank, for reports and tests.
struct array_counters {
    std::uint64_t promotions = 0;   ///< shadows made primaries, their primary's rank dead
    std::uint64_t repairs = 0;      ///< blocks mended after a writer died holding them
    std::uint64_t reshadowed = 0;   ///< new second copies made by this rank
    std::uint64_t lost_blocks = 0;  ///< blocks found with every copy gone
};

/// How an array is kept.
struct array_options {
    /// A second copy of every block on another rank (the default). Without
    /// it a rank's death loses its blocks: for scratch data that the
    /// program can compute again, at half the cost of a write.
    bool shadows = true;
};

namespace detail {

struct element_ops {
    std::size_t bytes = 0;
    /// dst[i] += alpha * src[i] for n elements (null where T has no arithmetic).
    void (*acc)(void* dst, const void* src, std::size_t n, const void* alpha) = nullptr;
    /// *elem += *inc (null where T is not an integer).
    void (*add)(void* elem, const void* inc) = nullptr;
};

class array_core {
public:
    /// Collective: every living rank creates the array with the same
    /// arguments. `cut(living ranks)` gives the distribution, from the count
    /// of ranks alive at creation, the same on every rank.
    array_core(std::string name, std::function<distribution(int)> cut, element_ops ops, bool shadows);
    array_core(array_core&&) noexcept = default;
    // Not assignable: the array assigned to would have to be destroyed,
    // collectively, in the middle of an assignment.
    array_core& operator=(array_core&&) = delete;
    ~array_core();

    const std::string& name() const;
    const distribution& layout() const;
    /// Throws rampart::invalid_argument naming `what` if destroyed.
    void check_usable(const char* what) const;
    /// Throws rampart::invalid_argument unless `p` lies inside the array.
    void check_patch(const patch& p, const char* what) const;

    void put(const patch& p, const void* data);
    void get(const patch& p, void* out) const;
    void acc(const patch& p, const void* data, const void* alpha);
    void read_inc(std::array<std::int64_t, 2> index, const void* inc, void* old);
    void reshadow();
    void destroy();
    bool destroyed() const noexcept;

    /// The ranks holding block b's copies now: {primary, shadow}, -1 where
    /// none.
    std::array<int, 2> holders(int block) const;
    /// The primary's rank after settling block b (-1: lost).
    int primary_of(int block) const;
    array_counters counters() const;
    /// The blocks whose two copies hold different bytes (each compared
    /// under its lock).
    std::vector<int> differing_copies() const;

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace detail
}  // namespace rampart::pgas
