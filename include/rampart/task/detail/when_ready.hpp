#pragma once
// Calls a function once every future among a set of inputs is ready. The
// inputs may be futures, shared futures, vectors of either, or plain values.

#include <rampart/task/future.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace rampart::detail {

template <class T>
struct is_future_vector : std::false_type {};
template <class T, class A>
struct is_future_vector<std::vector<T, A>> : is_future<T> {};

template <class T>
constexpr std::size_t static_future_count() {
    return is_future_v<T> ? 1 : 0;
}

template <class T>
std::size_t future_count(const T& x) {
    if constexpr (is_future_v<T>)
        return 1;
    else if constexpr (is_future_vector<T>::value)
        return x.size();
    else
        return 0;
}

template <class T>
state_base* state_of(T& f) {
    return future_access::state(f).get();
}

template <class... Ins>
inline constexpr bool has_vector_v = (is_future_vector<Ins>::value || ...);

template <class OnReady, class... Ins>
class when_ready_frame {
public:
    when_ready_frame(OnReady&& on_ready, std::tuple<Ins...>&& ins)
        : on_ready_(std::move(on_ready)), ins_(std::move(ins)) {}

    void start() {
        std::size_t n = std::apply([](const auto&... x) { return (future_count(x) + ... + 0); }, ins_);
        if constexpr (has_vector_v<Ins...>) nodes_.resize(n);
        pending_.store(n + 1, std::memory_order_relaxed);  // +1 until every node is attached
        std::size_t k = 0;
        std::apply([&](auto&... x) { (attach_all(x, k), ...); }, ins_);
        arrive();
    }

private:
    struct node final : continuation {
        when_ready_frame* frame = nullptr;
        void run() noexcept override { frame->arrive(); }
    };

    template <class T>
    void attach_all(T& x, std::size_t& k) {
        if constexpr (is_future_v<T>) {
            attach_one(x, k++);
        } else if constexpr (is_future_vector<T>::value) {
            for (auto& f : x) attach_one(f, k++);
        }
    }

    template <class Fut>
    void attach_one(Fut& f, std::size_t k) {
        nodes_[k].frame = this;
        state_of(f)->attach(&nodes_[k]);
    }

    void arrive() noexcept {
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::unique_ptr<when_ready_frame> self(this);
            on_ready_(std::move(ins_));
        }
    }

    static constexpr std::size_t fixed_count = (static_future_count<Ins>() + ... + 0);
    using nodes_t = std::conditional_t<has_vector_v<Ins...>, std::vector<node>, std::array<node, fixed_count>>;

    OnReady on_ready_;
    std::tuple<Ins...> ins_;
    nodes_t nodes_{};
    std::atomic<std::size_t> pending_{0};
};

/// on_ready(std::tuple<Ins...>&&) runs exactly once, on the thread that makes
/// the last input ready (or on this thread if all are ready already). It must
/// not throw.
template <class T>
void check_valid(const T& x) {
    if constexpr (is_future_v<T>) {
        if (!x.valid()) throw future_error("rampart: an empty future was passed as an input");
    } else if constexpr (is_future_vector<T>::value) {
        for (const auto& f : x) check_valid(f);
    }
}

/// Throws future_error if any future among the inputs is empty. Callers run
/// it before they allocate or enter anything, so the error leaks nothing.
template <class... Ins>
void check_inputs(const std::tuple<Ins...>& ins) {
    std::apply([](const auto&... x) { (check_valid(x), ...); }, ins);
}

template <class OnReady, class... Ins>
void when_ready(std::tuple<Ins...>&& ins, OnReady&& on_ready) {
    auto* frame = new when_ready_frame<std::decay_t<OnReady>, Ins...>(std::forward<OnReady>(on_ready), std::move(ins));
    frame->start();
}

}  // namespace rampart::detail

namespace rampart::detail {

/// Inputs of tasks that may run more than once (replay, replicas) must be
/// readable many times: futures become shared futures, the rest is unchanged.
template <class T>
struct shareable {
    using type = T;
    static T convert(T&& x) { return std::move(x); }
};
template <class T>
struct shareable<future<T>> {
    using type = shared_future<T>;
    static type convert(future<T>&& f) { return f.share(); }
};
template <class T, class A>
struct shareable<std::vector<future<T>, A>> {
    using type = std::vector<shared_future<T>>;
    static type convert(std::vector<future<T>, A>&& v) {
        type out;
        out.reserve(v.size());
        for (auto& f : v) out.push_back(f.share());
        return out;
    }
};

template <class T>
using shareable_t = typename shareable<std::decay_t<T>>::type;

template <class T>
shareable_t<T> make_shareable(T&& x) {
    std::decay_t<T> copy(std::forward<T>(x));
    return shareable<std::decay_t<T>>::convert(std::move(copy));
}

}  // namespace rampart::detail
