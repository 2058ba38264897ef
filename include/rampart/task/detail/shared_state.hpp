#pragma once
// The state shared by a promise and its futures: a single-assignment slot for a
// value or an exception, a lock-free list of continuations, and an intrusive
// reference count. One allocation per task.

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace rampart {

/// Thrown on misuse of a future or promise: get() on an empty future, a second
/// set_value, a promise destroyed without a value.
class future_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {

/// What `future<void>` stores.
struct void_value {
    friend bool operator==(void_value, void_value) noexcept { return true; }
};

template <class T>
using stored_t = std::conditional_t<std::is_void_v<T>, void_value, T>;

/// A callback run once when a state becomes ready. Nodes are intrusive so that
/// an object waiting on several states can embed one node per state.
struct continuation {
    continuation* next = nullptr;
    virtual void run() noexcept = 0;

protected:
    ~continuation() = default;
};

class state_base {
public:
    // States are made and freed once per task, often on different threads:
    // oneTBB's scalable allocator serves that better than malloc.
    static void* operator new(std::size_t bytes);
    static void operator delete(void* p) noexcept;

    state_base(const state_base&) = delete;
    state_base& operator=(const state_base&) = delete;

    void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
    }

    bool ready() const noexcept { return head_.load(std::memory_order_acquire) == ready_tag; }
    bool has_exception() const noexcept { return ready() && static_cast<bool>(error_); }
    const std::exception_ptr& exception() const noexcept { return error_; }

    /// Runs c->run() when the state is ready: at once on this thread if it is
    /// already, otherwise on the thread that makes it ready.
    void attach(continuation* c) noexcept {
        std::uintptr_t head = head_.load(std::memory_order_acquire);
        while (head != ready_tag) {
            c->next = reinterpret_cast<continuation*>(head);
            if (head_.compare_exchange_weak(head, reinterpret_cast<std::uintptr_t>(c), std::memory_order_acq_rel,
                                            std::memory_order_acquire))
                return;
        }
        c->run();
    }

    /// Blocks until ready. Inside the runtime the waiting task is suspended and
    /// its thread runs other tasks; outside it the caller sleeps.
    void wait();

    void set_exception(std::exception_ptr e) {
        if (!e) throw future_error("rampart: set_exception with a null exception_ptr");
        claim();
        error_ = std::move(e);
        publish();
    }

protected:
    explicit state_base(std::uint32_t refs) noexcept : refs_(refs) {}
    ~state_base() = default;

    /// Reserves the single assignment; a second one is a future_error.
    void claim() {
        if (claimed_.exchange(true, std::memory_order_relaxed))
            throw future_error("rampart: promise already satisfied");
    }
    void publish() noexcept;

    std::exception_ptr error_;

private:
    static constexpr std::uintptr_t ready_tag = 1;
    virtual void destroy() noexcept = 0;

    std::atomic<std::uintptr_t> head_{0};
    std::atomic<std::uint32_t> refs_;
    std::atomic<bool> claimed_{false};
};

template <class T>
class shared_state final : public state_base {
public:
    using value_type = stored_t<T>;

    explicit shared_state(std::uint32_t refs) noexcept : state_base(refs) {}

    template <class... A>
    void set_value(A&&... a) {
        claim();
        try {
            ::new (static_cast<void*>(&storage_)) value_type(std::forward<A>(a)...);
            has_value_ = true;
        } catch (...) {
            // The value could not be built: waiters get that exception instead.
            error_ = std::current_exception();
            publish();
            throw;
        }
        publish();
    }

    /// Stores the result of f(), or the exception it throws. Never throws.
    template <class F>
    void set_from(F&& f) noexcept {
        try {
            if constexpr (std::is_void_v<T>) {
                std::forward<F>(f)();
                set_value();
            } else {
                set_value(std::forward<F>(f)());
            }
        } catch (...) {
            try {
                set_exception(std::current_exception());
            } catch (...) {}
        }
    }

    /// The value after ready(); rethrows the stored exception.
    value_type& value() {
        if (error_) std::rethrow_exception(error_);
        return *std::launder(reinterpret_cast<value_type*>(&storage_));
    }

private:
    ~shared_state() {
        if (has_value_) std::launder(reinterpret_cast<value_type*>(&storage_))->~value_type();
    }
    void destroy() noexcept override { delete this; }

    alignas(value_type) unsigned char storage_[sizeof(value_type)];
    bool has_value_ = false;
};

/// Owning pointer to a state.
template <class S>
class state_ptr {
public:
    state_ptr() noexcept = default;
    /// Takes over one reference that the caller already holds.
    explicit state_ptr(S* s) noexcept : p_(s) {}
    state_ptr(const state_ptr& o) noexcept : p_(o.p_) {
        if (p_) p_->add_ref();
    }
    state_ptr(state_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    state_ptr& operator=(state_ptr o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~state_ptr() {
        if (p_) p_->release();
    }
    S* get() const noexcept { return p_; }
    S* operator->() const noexcept { return p_; }
    S& operator*() const noexcept { return *p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    S* detach() noexcept { return std::exchange(p_, nullptr); }

private:
    S* p_ = nullptr;
};

}  // namespace detail
}  // namespace rampart
