#pragma once
// Messages between ranks as futures (rampart::comm). The runtime serialises
// values; the user never sees a buffer or a size.

#include <rampart/comm/counters.hpp>
#include <rampart/comm/detail/engine.hpp>
#include <rampart/comm/errors.hpp>
#include <rampart/comm/serialization.hpp>
#include <rampart/resilience/errors.hpp>
#include <rampart/resilience/this_task.hpp>
#include <rampart/task/future.hpp>

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rampart::comm {

/// This process's logical rank, and the number of logical ranks.
///
///     if (rampart::comm::rank() == 0) std::printf("%d ranks\n", rampart::comm::size());
inline int rank() { return detail::engine::get().rank(); }
inline int size() { return detail::engine::get().size(); }

/// The node of every logical rank, numbered 0, 1, ... in the order of their
/// lowest rank: ranks whose processes started on one host share a number
/// (with RAMPART_RANKS_PER_NODE=k, every k consecutive ranks do). Fixed when
/// the job starts, so the same on every process for the whole job, though
/// a spare that replaces a rank may run on another node. Where they are not
/// known (a process died while the job started), each rank is a node.
///
///     const std::vector<int>& node = rampart::comm::nodes_at_start();  // node[r]: rank r's
inline const std::vector<int>& nodes_at_start() { return detail::engine::get().nodes_at_start(); }

/// True when this process was started by mpiexec (or rampart-run), so that
/// the program runs distributed; false for a plain start, where a program
/// may choose to run alone without MPI. Starts nothing.
///
///     if (rampart::comm::distributed()) run_across_ranks(); else run_here();
bool distributed();

namespace detail {

inline void check_peer(int peer, int tag, const char* what) {
    auto& e = engine::get();
    if (peer < 0 || peer >= e.size())
        throw rampart::invalid_argument(std::string("rampart::comm::") + what + ": rank " + std::to_string(peer) +
                                        " is not in [0, " + std::to_string(e.size()) + ")");
    if (tag < 0 || tag > e.max_tag())
        throw rampart::invalid_argument(std::string("rampart::comm::") + what + ": tag " + std::to_string(tag) +
                                        " is not in [0, " + std::to_string(e.max_tag()) + "]");
}

template <class T>
class typed_target final : public incoming_target {
public:
    explicit typed_target(promise<T> p) : p_(std::move(p)) {}

    void* prepare(std::size_t bytes) override {
        if constexpr (is_byte_vector<T>::value) {
            using U = typename T::value_type;
            if (bytes % sizeof(U) != 0) return nullptr;
            value_.resize(bytes / sizeof(U));
            return bytes ? static_cast<void*>(value_.data()) : static_cast<void*>(this);
        } else if constexpr (zero_copy_v<T>) {
            return bytes == sizeof(T) ? static_cast<void*>(raw_) : nullptr;
        } else {
            bytes_.resize(bytes);
            return bytes ? bytes_.data() : static_cast<void*>(this);
        }
    }

    void deliver(const envelope& e) override {
        const payload_kind expected_kind = zero_copy_v<T> ? payload_kind::bytes : payload_kind::cereal;
        if (e.type_hash != type_hash<T>() || e.kind != static_cast<std::uint16_t>(expected_kind))
            return fail(std::make_exception_ptr(message_error(describe_mismatch(e, type_hash<T>(), e.payload_bytes))));
        try {
            if constexpr (is_byte_vector<T>::value) {
                p_.set_value(std::move(value_));
            } else if constexpr (zero_copy_v<T>) {
                T v;
                std::memcpy(static_cast<void*>(&v), raw_, sizeof(T));
                p_.set_value(std::move(v));
            } else {
                p_.set_value(decode_cereal<T>(bytes_.data(), bytes_.size()));
            }
        } catch (const std::exception& x) {
            fail(std::make_exception_ptr(
                message_error(std::string("rampart: message could not be decoded: ") + x.what())));
        }
    }

    void fail(std::exception_ptr e) override {
        try {
            p_.set_exception(std::move(e));
        } catch (...) {}
    }

    std::uint64_t expected_type() const override { return type_hash<T>(); }

private:
    promise<T> p_;
    std::conditional_t<is_byte_vector<T>::value, T, char> value_{};
    alignas(std::max_align_t) unsigned char raw_[zero_copy_v<T> && !is_byte_vector<T>::value ? sizeof(T) : 1]{};
    std::string bytes_;
};

}  // namespace detail

/// Sends `value` to logical rank `dest` with `tag`. The future is ready when
/// the value has left (not when it has been received). Trivially copyable
/// values and std::vectors of them are sent from their own bytes; other types
/// need cereal serialisation.
///
/// Inside a resilient task (replay, replicate, async_await_check) the send is
/// held back until the task's result is accepted: an attempt that fails or a
/// copy that loses the vote sends nothing. Its future is then ready only after
/// the task has finished, so do not wait for it inside the task.
///
///     auto sent = rampart::comm::isend(1, 7, std::vector<double>{1.0, 2.0});
///     auto got = rampart::comm::irecv<std::vector<double>>(0, 7);   // on rank 1
template <class T>
future<void> isend(int dest, int tag, T&& value) {
    detail::check_peer(dest, tag, "isend");
    promise<void> done;
    auto f = done.get_future();
    auto payload = detail::encode(std::forward<T>(value));
    if (this_task::resilient()) {
        struct held {
            int dest, tag;
            detail::outgoing_payload payload;
            promise<void> done;
        };
        auto h = std::make_shared<held>(held{dest, tag, std::move(payload), std::move(done)});
        this_task::hold_until_accepted(
            [h] { detail::engine::get().post_send(h->dest, h->tag, std::move(h->payload), std::move(h->done)); },
            [h] {
                try {
                    h->done.set_exception(std::make_exception_ptr(
                        rampart::error("rampart: send discarded with a failed or outvoted attempt")));
                } catch (...) {}
            });
        return f;
    }
    detail::engine::get().post_send(dest, tag, std::move(payload), std::move(done));
    return f;
}

namespace detail {
template <class T>
future<T> post_irecv(int source, int tag) {
    promise<T> p;
    auto f = p.get_future();
    engine::get().post_recv(source, tag, std::make_unique<typed_target<T>>(std::move(p)));
    return f;
}
}  // namespace detail

/// Receives the next message from logical rank `source` with `tag` as a T.
/// Messages from one source with one tag arrive in the order they were sent.
/// A message of another type or size is a message_error in the future.
///
/// Inside a resilient task the receive is posted once for the task: every
/// replay and every replica that makes its k-th irecv(source, tag) gets the
/// same message.
template <class T>
future<T> irecv(int source, int tag) {
    static_assert(!std::is_reference_v<T> && !std::is_const_v<T>, "irecv<T>: T must be a plain value type");
    detail::check_peer(source, tag, "irecv");
    if (this_task::resilient()) {
        const std::string channel = "irecv:" + std::to_string(source) + ":" + std::to_string(tag) + ":" +
                                    std::to_string(detail::type_hash<T>());
        auto shared = this_task::same_input<shared_future<T>>(
            channel, [&] { return new shared_future<T>(detail::post_irecv<T>(source, tag).share()); });
        return shared->then([](shared_future<T> s) { return s.get(); });
    }
    return detail::post_irecv<T>(source, tag);
}

}  // namespace rampart::comm
