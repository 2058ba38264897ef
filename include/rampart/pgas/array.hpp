#pragma once
// Fault-tolerant distributed arrays (rampart::pgas), after FT-ARMCI: a 1-D
// or 2-D array cut into blocks over the ranks, read and written one-sidedly
// by patches, as with Global Arrays. Every block has a second copy (its
// shadow) on another rank, on another node when there is one. When a rank
// dies the survivors go on with no spare and no restart: its blocks are
// served by their shadows, and the array makes new shadows in the
// background.
//
//     rampart::runtime rt;
//     rampart::pgas::array<double> a("x", 1000);                  // collective
//     if (rampart::comm::rank() == 0) a.put(rampart::pgas::patch::range(0, 3), std::vector<double>{1, 2, 3});
//     a.sync();                                                   // every rank sees the put
//     std::vector<double> v = a.get(rampart::pgas::patch::range(0, 3)).get();

#include <rampart/pgas/detail/array_core.hpp>
#include <rampart/pgas/distribution.hpp>
#include <rampart/pgas/errors.hpp>
#include <rampart/pgas/barrier.hpp>
#include <rampart/comm/comm.hpp>
#include <rampart/task/future.hpp>

#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace rampart::pgas {

namespace detail {

template <class T>
detail::element_ops element_ops_of() {
    detail::element_ops ops;
    ops.bytes = sizeof(T);
    if constexpr (std::is_arithmetic_v<T>) {
        ops.acc = [](void* dst, const void* src, std::size_t n, const void* alpha) {
            T* d = static_cast<T*>(dst);
            const T* s = static_cast<const T*>(src);
            const T a = *static_cast<const T*>(alpha);
            for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] + a * s[i]);
        };
    }
    if constexpr (std::is_integral_v<T>) {
        ops.add = [](void* elem, const void* inc) {
            *static_cast<T*>(elem) = static_cast<T>(*static_cast<T*>(elem) + *static_cast<const T*>(inc));
        };
    }
    return ops;
}

}  // namespace detail

/// A distributed array of T (trivially copyable). Creation and destruction
/// are collective; every operation else is one-sided: it is called by one
/// rank and needs nothing of the others. Blocking calls complete on both
/// copies before they return; the async_ forms return futures. Concurrent
/// puts to one element, or a get concurrent with a put of it, give either
/// value (as in Global Arrays); accs to one element are atomic.
template <class T>
class array {
    static_assert(std::is_trivially_copyable_v<T>, "rampart::pgas::array<T> needs a trivially copyable T");

public:
    /// A 1-D array of n elements, cut evenly over the living ranks.
    ///
    ///     rampart::pgas::array<long> counter("tasks", 1);
    array(std::string name, std::int64_t n, array_options o = {})
        : core_(
              std::move(name), [n](int ranks) { return distribution::even({n}, ranks); },
              detail::element_ops_of<T>(), o.shadows) {}
    /// A 2-D array of rows x cols, on a grid of blocks as square as the
    /// count of living ranks allows.
    array(std::string name, std::int64_t rows, std::int64_t cols, array_options o = {})
        : core_(
              std::move(name), [rows, cols](int ranks) { return distribution::even({rows, cols}, ranks); },
              detail::element_ops_of<T>(), o.shadows) {}
    /// An array cut as `d` says (distribution::blocked or ::irregular), with
    /// at most as many blocks as living ranks.
    ///
    ///     rampart::pgas::array<float> m("m", rampart::pgas::distribution::blocked({512, 512}, {128, 512}, 4));
    array(std::string name, distribution d, array_options o = {})
        : core_(
              std::move(name), [d](int) { return d; }, detail::element_ops_of<T>(), o.shadows) {}

    array(array&&) noexcept = default;
    array& operator=(array&&) = delete;  // destroy() one, create another
    /// Destroys the array (collective) unless destroy() was called.
    ~array() = default;

    const std::string& name() const { return core_.name(); }
    const distribution& layout() const { return core_.layout(); }

    /// Writes `data` (the patch's elements, row by row) into the patch.
    ///
    ///     a.put({{0, 0}, {2, 2}}, std::vector<double>{1, 2, 3, 4});
    void put(const patch& p, std::span<const T> data) {
        check(p, data.size(), "put");
        core_.put(p, data.data());
    }
    void put(const patch& p, const std::vector<T>& data) { put(p, std::span<const T>(data)); }

    /// Reads the patch into `out` (its elements, row by row).
    void get(const patch& p, std::span<T> out) const {
        check(p, out.size(), "get");
        core_.get(p, out.data());
    }
    /// Reads the patch; the future holds its elements, row by row.
    ///
    ///     std::vector<double> row = a.get(rampart::pgas::patch::range(0, 10)).get();
    future<std::vector<T>> get(const patch& p) const {
        core_.check_patch(p, "get");
        std::vector<T> out(static_cast<std::size_t>(p.elements()));
        core_.get(p, out.data());
        return make_ready_future(std::move(out));
    }

    /// Element-wise patch += alpha * data, atomically for each element (as
    /// Global Arrays' NGA_Acc).
    ///
    ///     a.acc(rampart::pgas::patch::range(0, 2), std::vector<double>{1, 1}, 0.5);
    void acc(const patch& p, std::span<const T> data, T alpha = T(1))
        requires std::is_arithmetic_v<T>
    {
        check(p, data.size(), "acc");
        core_.acc(p, data.data(), &alpha);
    }
    void acc(const patch& p, const std::vector<T>& data, T alpha = T(1))
        requires std::is_arithmetic_v<T>
    {
        acc(p, std::span<const T>(data), alpha);
    }

    /// Atomic fetch-and-add on one element, taking effect exactly once even
    /// when a rank dies during it: returns the value before (Global Arrays'
    /// NGA_Read_inc, the load-balancing counter).
    ///
    ///     long task = counter.read_inc({0, 0}, 1);
    T read_inc(std::array<std::int64_t, 2> index, T inc = T(1))
        requires std::is_integral_v<T>
    {
        core_.check_patch(patch::element(index[0], index[1]), "read_inc");
        T old{};
        core_.read_inc(index, &inc, &old);
        return old;
    }
    T read_inc(std::int64_t index, T inc = T(1))
        requires std::is_integral_v<T>
    {
        return read_inc({index, 0}, inc);
    }

    /// Non-blocking forms. On one node they complete before they return
    /// (the data path is a copy in memory); the future says so.
    future<void> async_put(const patch& p, std::span<const T> data) {
        put(p, data);
        return make_ready_future();
    }
    future<void> async_acc(const patch& p, std::span<const T> data, T alpha = T(1))
        requires std::is_arithmetic_v<T>
    {
        acc(p, data, alpha);
        return make_ready_future();
    }
    future<T> async_read_inc(std::array<std::int64_t, 2> index, T inc = T(1))
        requires std::is_integral_v<T>
    {
        return make_ready_future(read_inc(index, inc));
    }

    /// Waits until this rank's operations on the array are complete on both
    /// copies.
    void fence() { core_.check_usable("fence"); }
    /// fence() on every rank, then the fault-tolerant barrier: afterwards
    /// every rank sees every write made before it (GA_Sync).
    void sync() {
        fence();
        pgas::barrier();
    }
    /// Waits until every block has two copies again (where a living rank
    /// can hold the second); the array also does this in the background
    /// after every failure. Not collective.
    void reshadow() { core_.reshadow(); }
    /// Collective: frees every rank's memory of the array. Any later call
    /// is a rampart::invalid_argument.
    void destroy() { core_.destroy(); }

    /// The ranks holding block b's primary and shadow now (-1: none).
    std::array<int, 2> holders(int block) const { return core_.holders(block); }
    /// The rank holding block b's primary, after the shadow of a dead one
    /// took over, as far as this rank knows of deaths (ranks may disagree for
    /// a moment after one: share work out with a task_pool); -1 if the block
    /// is lost.
    int primary_of(int block) const { return core_.primary_of(block); }
    array_counters counters() const { return core_.counters(); }
    /// The blocks whose two copies differ (none, unless memory was
    /// corrupted): a check for tests and for suspicions.
    std::vector<int> differing_copies() const { return core_.differing_copies(); }

private:
    void check(const patch& p, std::size_t elements, const char* what) const {
        core_.check_patch(p, what);
        if (elements != static_cast<std::size_t>(p.elements()))
            throw rampart::invalid_argument(std::string("rampart::pgas: ") + what + " on array '" + core_.name() +
                                            "': " + std::to_string(elements) + " elements for patch " + p.text() +
                                            " of " + std::to_string(p.elements()));
    }

    detail::array_core core_;
};

/// Collective: copies `from` into `to` (GA_Copy). Both must have the same
/// shape (extents); each rank copies the blocks whose primary it holds, then
/// all synchronise. During a failure a dead rank's blocks may be missed:
/// copy again once it is known.
template <class T>
void copy(const array<T>& from, array<T>& to) {
    if (from.layout().whole() != to.layout().whole())
        throw rampart::invalid_argument("rampart::pgas: copy from array '" + from.name() + "' " +
                                        from.layout().whole().text() + " to array '" + to.name() + "' " +
                                        to.layout().whole().text() + ": the shapes differ");
    to.sync();  // the writes to `from` made before are seen
    for (int b = 0; b < to.layout().blocks(); ++b) {
        if (to.primary_of(b) != comm::rank()) continue;
        const patch mine = to.layout().block_patch(b);
        std::vector<T> buf(static_cast<std::size_t>(mine.elements()));
        from.get(mine, std::span<T>(buf));
        to.put(mine, buf);
    }
    to.sync();
}

}  // namespace rampart::pgas
