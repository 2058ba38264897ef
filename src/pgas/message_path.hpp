#pragma once
// The data path of an array whose ranks run on several nodes: no memory is
// shared, and every operation is a message to the rank that holds the
// block's primary copy. That rank applies it, gives it the block's next
// version and forwards it to the shadow's rank, which applies the versions
// in order and answers the caller (a chain: caller, primary, shadow,
// caller), so that a write is answered only once both copies have it.
//
// Failures: when the primary's rank dies, the shadow's rank makes its copy
// the primary. Callers ask again whatever is unanswered after every death
// and recovery (messages in flight may be dropped); every holder keeps, per
// caller, the results of the operations it applied until the caller says it
// has them, so an operation asked twice is applied once (read_inc exactly
// once). A primary keeps what it forwarded until the shadow acknowledges it
// and sends it again after a recovery. A block left with one copy gets a
// new shadow: the primary sends its copy, with those results, to another
// rank (message_holder.cpp). The protocol is written down in docs/pgas.md.

#include <rampart/pgas/detail/array_core.hpp>

#include "message_format.hpp"

#include <atomic>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace rampart::pgas::detail {

class pgas_service;

/// A message carries at most 4 GiB (its length is 32 bits): a block, whole
/// in a new shadow's copy, leaves room for the results kept with it.
inline constexpr std::size_t max_block_bytes_across_nodes = (std::size_t{1} << 32) - (std::size_t{1} << 20);

class message_path {
public:
    /// `primary[b]`, `shadow[b]`: the first holders of block b (shadow -1:
    /// none); this rank makes the copies it holds, zero-filled.
    message_path(std::string name, std::uint64_t uid, const distribution& dist, element_ops ops, bool shadows,
                 std::vector<int> primary, std::vector<int> shadow, pgas_service& svc);
    ~message_path();
    message_path(const message_path&) = delete;
    message_path& operator=(const message_path&) = delete;

    // Operations of this rank (message_client.cpp). `q` lies in block b.
    void put(int b, const patch& asked, const patch& q, const char* data);
    void get(int b, const patch& asked, const patch& q, char* out);
    void acc(int b, const patch& asked, const patch& q, const char* data, const void* alpha);
    void read_inc(int b, const patch& asked, std::array<std::int64_t, 2> index, const void* inc, void* old);
    /// The holders of block b as this rank knows them ({-1, -1}: lost).
    std::array<int, 2> holders(int b);
    /// The blocks whose copies differ, asked of both holders.
    std::vector<int> differing_copies();

    // Holders (message_holder.cpp).
    /// A message of this array from `source` (on the engine thread).
    void on_message(int source, const message& m);
    /// After deaths and recoveries (on the service's thread): promotes
    /// shadows of dead primaries, drops dead shadows, sends again what may
    /// have been dropped, gives blocks left with one copy a new shadow.
    void after_recovery();
    /// Waits until every block this rank holds as primary has a shadow that
    /// has acknowledged its copy (where a living rank can hold one).
    void reshadow();
    array_counters counters() const;
    void stop();  // destroyed: messages are dropped from now on

private:
    struct record {
        std::uint64_t version = 0;
        std::vector<char> result;
    };
    struct held {
        bool primary = false;
        int peer = -1;                // the other holder
        std::vector<char> bytes;      // the copy
        std::uint64_t version = 0;    // operations applied
        std::uint64_t acked = 0;      // primary: the shadow has the versions up to this one
        bool copy_unacked = false;    // primary: a new shadow has not acknowledged its copy yet
        std::uint64_t copy_version = 0;
        std::map<std::uint64_t, std::vector<char>> forwarded;  // primary: version -> forward not acknowledged
        std::map<std::uint64_t, message> early;                 // shadow: forwards after a gap
        std::map<int, std::map<std::uint64_t, record>> done;   // caller -> op -> what it made
    };
    struct waiting {
        bool answered = false;
        std::uint32_t status = 0;  // answer_status, or the role in a located
        int hint = -1;
        std::vector<char> result;
        std::atomic<bool>* flag = nullptr;  // set once answered: the caller spins on it first
    };

    // message_holder.cpp
    void on_request(int source, const message& m);
    void on_forward(int source, const message& m);
    void on_ack(int source, const message& m);
    void on_copy(int source, const message& m);
    void on_locate(int source, const message& m);
    void on_compare(int source, const message& m);
    std::vector<char> apply(held& h, const message& m);
    void apply_forward(held& h, const message& m);
    void promote(held& h);
    void settle_locked();
    void new_shadows_locked();
    void send_copy(int b, held& h);
    void answer(int dest, std::uint64_t seq, answer_status st, int hint, std::vector<char> result);
    void send(int dest, const message& m);
    void acknowledge(int primary, int block, std::uint64_t version);

    // message_client.cpp
    std::vector<char> call(int b, const patch& asked, message request);
    int locate(int b, const patch& asked);
    void on_answer(const message& m);
    bool wait_answer(std::uint64_t seq, const std::atomic<bool>& flag, std::uint64_t recoveries,
                     std::uint64_t deaths);
    std::map<int, waiting> ask_all(std::map<int, message> to);
    bool every_block_shadowed();

    std::string name_;
    std::uint64_t uid_;
    distribution dist_;
    element_ops ops_;
    bool shadows_;
    pgas_service& svc_;
    int me_;

    mutable std::mutex m_;  // the copies held here
    std::map<int, held> held_;
    array_counters counts_;
    std::set<int> lost_;  // blocks found with no copy (counted once)
    bool stopped_ = false;

    std::mutex client_m_;  // this rank's operations
    std::condition_variable client_cv_;
    std::vector<int> primary_, shadow_;          // as this rank knows them
    std::map<std::uint64_t, waiting> waiting_;   // op -> its answer
    std::atomic<std::uint64_t> next_seq_{0};
};

}  // namespace rampart::pgas::detail
