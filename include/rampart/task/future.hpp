#pragma once
// future<T>, shared_future<T> and promise<T>: single assignment of a value or
// an exception, continuations that never block a worker thread.

#include <rampart/task/detail/scheduler.hpp>
#include <rampart/task/detail/shared_state.hpp>

#include <exception>
#include <functional>
#include <type_traits>
#include <utility>

namespace rampart {

template <class T>
class future;
template <class T>
class shared_future;
template <class T>
class promise;

namespace detail {

struct future_access {
    template <class T>
    static future<T> make(state_ptr<shared_state<T>> s) noexcept {
        return future<T>(std::move(s));
    }
    template <class F>
    static auto& state(F& f) noexcept {
        return f.s_;
    }
};

template <class T>
struct is_future : std::false_type {};
template <class T>
struct is_future<future<T>> : std::true_type {};
template <class T>
struct is_future<shared_future<T>> : std::true_type {};
template <class T>
inline constexpr bool is_future_v = is_future<std::remove_cvref_t<T>>::value;

/// Creates the state of a new task, spawns fn (which returns R) in `scope` and
/// returns the future of its result. The caller has entered `scope`.
template <class R, class F>
future<R> launch(finish_scope* scope, F&& fn) {
    auto* st = new shared_state<R>(2);  // one for the future, one for the task
    scheduler::get().spawn(scope, [st, f = std::forward<F>(fn)]() mutable noexcept {
        st->set_from(std::move(f));
        st->release();
    });
    return future_access::make(state_ptr<shared_state<R>>(st));
}

/// A heap continuation that spawns a task once a state is ready.
template <class F>
class spawn_continuation final : public continuation {
public:
    spawn_continuation(finish_scope* scope, F&& f) : scope_(scope), f_(std::move(f)) {}
    void run() noexcept override {
        try {
            scheduler::get().spawn(scope_, std::move(f_));
        } catch (...) {
            // Only a lost runtime gets here; nothing can run the task.
            std::terminate();
        }
        delete this;
    }

private:
    finish_scope* scope_;
    F f_;
};

template <class S>
void throw_if_empty(const S& s) {
    if (!s) throw future_error("rampart: operation on an empty future");
}

/// What future and shared_future have in common: the state and its queries.
template <class T>
class future_base {
public:
    using value_type = T;

    /// False for a default-constructed future and after future::get().
    bool valid() const noexcept { return static_cast<bool>(s_); }
    bool is_ready() const noexcept { return s_ && s_->ready(); }
    bool has_value() const noexcept { return is_ready() && !s_->has_exception(); }
    bool has_exception() const noexcept { return s_ && s_->has_exception(); }

    /// Waits until ready; inside a task the worker runs other tasks meanwhile.
    void wait() const {
        throw_if_empty(s_);
        s_->wait();
    }

protected:
    future_base() noexcept = default;
    explicit future_base(state_ptr<shared_state<T>> s) noexcept : s_(std::move(s)) {}
    friend struct future_access;

    state_ptr<shared_state<T>> s_;
};

}  // namespace detail

/// The result of an asynchronous operation, read once.
///
///     rampart::future<int> f = rampart::async([] { return 6 * 7; });
///     int v = f.get();            // 42; f is empty afterwards
///     auto g = rampart::async([] { return 1; }).then([](auto f) { return f.get() + 1; });
///
/// Not thread-safe: one future is used by one thread at a time.
template <class T>
class future : public detail::future_base<T> {
    using base = detail::future_base<T>;
    using base::s_;

public:
    future() noexcept = default;
    future(future&&) noexcept = default;
    future& operator=(future&&) noexcept = default;
    future(const future&) = delete;
    future& operator=(const future&) = delete;

    /// Waits, then returns the value (moved out) or rethrows the exception.
    T get() {
        detail::throw_if_empty(s_);
        s_->wait();
        auto s = std::move(s_);
        if constexpr (std::is_void_v<T>)
            (void)s->value();
        else
            return std::move(s->value());
    }

    shared_future<T> share() noexcept;

    /// Runs f(future<T>) as a new task once this future is ready.
    template <class F>
    auto then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>, future<T>>>;

private:
    friend struct detail::future_access;
    friend class shared_future<T>;
    explicit future(detail::state_ptr<detail::shared_state<T>> s) noexcept : base(std::move(s)) {}
};

/// A future that many readers may copy and read.
///
///     rampart::shared_future<std::vector<double>> a = rampart::async(make_field).share();
///     const std::vector<double>& v = a.get();   // a stays valid
template <class T>
class shared_future : public detail::future_base<T> {
    using base = detail::future_base<T>;
    using base::s_;

public:
    shared_future() noexcept = default;
    shared_future(future<T>&& f) noexcept : base(std::move(f.s_)) {}

    /// Waits, then returns a reference to the value, or rethrows.
    decltype(auto) get() const {
        detail::throw_if_empty(s_);
        s_->wait();
        if constexpr (std::is_void_v<T>)
            (void)s_->value();
        else
            return static_cast<const T&>(s_->value());
    }

    template <class F>
    auto then(F&& f) const -> future<std::invoke_result_t<std::decay_t<F>, shared_future<T>>>;

private:
    friend struct detail::future_access;
};

/// The writing end of a future.
///
///     rampart::promise<int> p;
///     auto f = p.get_future();
///     p.set_value(7);
///
/// A promise destroyed before it is satisfied leaves a future_error
/// ("broken promise") in its future.
template <class T>
class promise {
public:
    promise() : s_(new detail::shared_state<T>(1)) {}
    promise(promise&&) noexcept = default;
    promise& operator=(promise&& o) noexcept {
        if (this != &o) {
            abandon();
            s_ = std::move(o.s_);
            retrieved_ = o.retrieved_;
        }
        return *this;
    }
    ~promise() { abandon(); }

    /// May be called once.
    future<T> get_future() {
        detail::throw_if_empty(s_);
        if (retrieved_) throw future_error("rampart: future already retrieved");
        retrieved_ = true;
        return detail::future_access::make(s_);
    }

    template <class... A>
    void set_value(A&&... a) {
        detail::throw_if_empty(s_);
        s_->set_value(std::forward<A>(a)...);
    }
    void set_exception(std::exception_ptr e) {
        detail::throw_if_empty(s_);
        s_->set_exception(std::move(e));
    }

private:
    void abandon() noexcept {
        if (s_ && !s_->ready()) {
            try {
                s_->set_exception(std::make_exception_ptr(future_error("rampart: broken promise")));
            } catch (...) {
                // Satisfied concurrently; nothing to do.
            }
        }
    }
    detail::state_ptr<detail::shared_state<T>> s_;
    bool retrieved_ = false;
};

/// A future that is already ready with `value`.
template <class T>
future<std::decay_t<T>> make_ready_future(T&& value) {
    detail::state_ptr<detail::shared_state<std::decay_t<T>>> s(new detail::shared_state<std::decay_t<T>>(1));
    s->set_value(std::forward<T>(value));
    return detail::future_access::make(std::move(s));
}

inline future<void> make_ready_future() {
    detail::state_ptr<detail::shared_state<void>> s(new detail::shared_state<void>(1));
    s->set_value();
    return detail::future_access::make(std::move(s));
}

/// A future that is ready with an exception.
template <class T>
future<T> make_exceptional_future(std::exception_ptr e) {
    detail::state_ptr<detail::shared_state<T>> s(new detail::shared_state<T>(1));
    s->set_exception(std::move(e));
    return detail::future_access::make(std::move(s));
}

template <class T>
shared_future<T> future<T>::share() noexcept {
    return shared_future<T>(std::move(*this));
}

namespace detail {

template <class Fut, class F>
auto then_impl(Fut self, F&& f) {
    using R = std::invoke_result_t<std::decay_t<F>, Fut>;
    throw_if_empty(future_access::state(self));
    finish_scope* scope = enter_current_finish();
    auto* st = new shared_state<R>(2);
    auto* source = future_access::state(self).get();
    auto task = [st, self = std::move(self), fn = std::forward<F>(f)]() mutable noexcept {
        st->set_from([&]() -> R { return std::invoke(std::move(fn), std::move(self)); });
        st->release();
    };
    source->attach(new spawn_continuation<decltype(task)>(scope, std::move(task)));
    return future_access::make(state_ptr<shared_state<R>>(st));
}

}  // namespace detail

template <class T>
template <class F>
auto future<T>::then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>, future<T>>> {
    return detail::then_impl(std::move(*this), std::forward<F>(f));
}

template <class T>
template <class F>
auto shared_future<T>::then(F&& f) const -> future<std::invoke_result_t<std::decay_t<F>, shared_future<T>>> {
    return detail::then_impl(*this, std::forward<F>(f));
}

}  // namespace rampart
