#pragma once
// Services: protocols of the runtime's own on top of the communication
// engine (the replicated store is one). A service exchanges byte messages
// with the service of the same number on other logical ranks, outside the
// numbered, logged channels of isend/irecv, and takes part in every crash
// recovery: it tells the others a state of its own once the survivors agree
// on who died, and hears who was replaced and who was lost.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace rampart::comm {

namespace detail {
class engine;
}

/// Memory a service message covers without copying it.
struct segment {
    const void* data = nullptr;
    std::size_t bytes = 0;
};

/// Memory a service reply is received into (see service::expect_reply).
struct receive_segment {
    void* data = nullptr;
    std::size_t bytes = 0;
};

/// Base of a service. Its handlers run on the engine thread and must not
/// block; its calls may come from any thread. Services get their numbers in
/// the order they attach, so every rank attaches the same services in the
/// same order (as it creates the same stores in the same order).
///
///     class echo final : public rampart::comm::service {
///     public:
///         echo() { attach(); }
///         ~echo() override { detach(); }
///         void ping(int dest) { send(dest, {'p'}, {}, [](bool) {}, epoch()); }
///         void on_message(int source, std::vector<char>&& bytes, std::size_t offset) override {
///             if (bytes.at(offset) == 'p') send(source, {'q'}, {}, [](bool) {}, epoch());
///         }
///         void on_recovery(const std::vector<int>&, const std::vector<int>&,
///                          const std::vector<std::vector<char>>&) override {}
///     };
///
/// Every operation belongs to a recovery epoch: the count of recoveries the
/// service had seen when it decided on it (epoch(), read once for all the
/// operations of one exchange). An operation of an older epoch than the
/// engine's when it reaches MPI is dropped (its done gets false), as are
/// messages held for a service not attached yet when a recovery ends:
/// services ask again in on_recovery, so that nothing of an exchange cut by
/// a recovery meets a later one.
class service {
public:
    service() = default;
    service(const service&) = delete;
    service& operator=(const service&) = delete;
    virtual ~service() = default;

    /// A message from logical rank `source`; its bytes start at `offset`.
    virtual void on_message(int source, std::vector<char>&& bytes, std::size_t offset) = 0;
    /// A recovery ended. `replaced` logical ranks run on a new process now
    /// (what they held is gone); `lost` logical ranks have no process any
    /// more. `states[q]` is what recovery_state() gave on logical rank q in
    /// this recovery, the same on every process (empty where the service
    /// does not exist, as on a replacement that has not created it yet).
    /// Messages in flight during the recovery may be lost: send again what
    /// still lacks an answer.
    virtual void on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                             const std::vector<std::vector<char>>& states) = 0;
    /// Called once by attach(), before any handler: the states (see
    /// recovery_state) of this service by logical rank from the last
    /// recovery, for a service made after it (as on the process that
    /// replaced a dead rank); empty before any recovery. No recovery comes
    /// between this call and the service's first on_recovery.
    virtual void on_attach(const std::vector<std::vector<char>>& states) { (void)states; }
    /// What this rank's service tells the others at each recovery, once the
    /// survivors have agreed on who died (so that all decide from the same
    /// facts, with no further message). Called on the engine thread.
    virtual std::vector<char> recovery_state() { return {}; }

    /// The largest reply (see reply()).
    static constexpr std::size_t max_reply_bytes = std::size_t{1} << 30;

protected:
    /// Starts the service: from now on its handlers are called (at once
    /// for messages that came before), after on_attach. Starts the engine
    /// if needed. Waits while a recovery has taken the services' states and
    /// not yet called on_recovery: a service attached after a recovery
    /// sees it in on_attach, one attached before in on_recovery.
    void attach();
    /// Stops the calls; no handler runs once it returns.
    void detach();
    /// Its number, the same on every rank (set by attach()).
    int number() const noexcept { return number_; }
    /// The recoveries ended so far: the epoch of an operation decided now.
    std::uint64_t epoch() const;

    /// Sends `head` followed by the bytes of `data` to logical rank `dest`.
    /// The memory of `data` must stay valid until `done` is called, on the
    /// engine thread, with false if the send failed or was dropped.
    void send(int dest, std::vector<char> head, std::vector<segment> data, std::function<void(bool)> done,
              std::uint64_t epoch);

    /// Replies that go straight into the asker's memory, with no copy on the
    /// way (the bulk of a store load). The asker takes a number with
    /// new_reply_number(), posts expect_reply for it, then sends its request
    /// (with the number in it); the answerer sends the reply by reply() to
    /// that number, as bare bytes (at most max_reply_bytes). The memory of
    /// `into` may be written until `done` is called, on the engine thread:
    /// done(true, n) when a reply of n bytes came (n larger than `into`:
    /// nothing written, counted as malformed), done(false, 0) if MPI failed
    /// it or it was dropped (ask again in on_recovery). Replies from one
    /// source to one service are matched in the order they were expected.
    ///
    ///     const auto n = new_reply_number(), e = epoch();
    ///     expect_reply(holder, n, {{out, bytes}}, [](bool ok, std::size_t got) { ... }, e);
    ///     send(holder, request_with(n), {}, [](bool) {}, e);
    ///     // on the holder, in on_message:
    ///     reply(asker, n, {{data, bytes}}, [](bool) {}, epoch());
    std::uint64_t new_reply_number();
    void expect_reply(int source, std::uint64_t reply_number, std::vector<receive_segment> into,
                      std::function<void(bool, std::size_t)> done, std::uint64_t epoch);
    /// Throws rampart::invalid_argument for more than max_reply_bytes.
    void reply(int dest, std::uint64_t reply_number, std::vector<segment> data, std::function<void(bool)> done,
               std::uint64_t epoch);

    /// While some operation of any service runs (count above 0), the engine
    /// polls without pausing, so that service messages are answered at once.
    void busy(int delta);
    /// How often logical rank `rank` has been replaced (0: the process that
    /// started as it), as of the last recovery (the one of on_attach and
    /// of on_recovery): the same on every process.
    int incarnation_of(int rank) const;

private:
    int number_ = -1;
    friend class detail::engine;
};

}  // namespace rampart::comm
