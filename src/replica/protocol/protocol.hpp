#pragma once
// The replication protocol of one process (the parallel protocol of
// "Replication for send-deterministic MPI HPC applications", Lefray, Ropars
// and Schiper, FTXS 2013, Algorithm 1, with its recovery done for any
// number of replicas). Every MPI call of the program enters here on the
// program's own thread; the protocol makes progress only inside those calls,
// as MPI itself does.
//
// Messages travel on MPI_COMM_WORLD, which the program never sees. A data
// message's MPI tag holds its context (which of the program's communicators,
// point-to-point or collective) and the program's tag. Each ordered pair of
// logical ranks is a stream whose messages are numbered by their order:
// every replica of a sender sends the same messages in the same order
// (send-determinism), so number n means the same message at every replica.
// The number is not sent: MPI keeps the messages of one process to another
// in order, so a receiver counts them.

#include "collective_order.hpp"
#include "fault_orders.hpp"
#include "layout.hpp"
#include "pending_sends.hpp"
#include "requests.hpp"
#include "transport.hpp"

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace rampart::replica::detail {

struct communicator;

/// Tags on MPI_COMM_WORLD: data below control_tag_base (the context, the
/// program's tag, and a bit for synchronous sends), then the controls.
constexpr int app_tag_bits = 19;
constexpr int max_app_tag = (1 << app_tag_bits) - 1;
constexpr int max_contexts = 1 << 10;  // two per communicator: point-to-point, collectives
constexpr int synchronous_bit = max_contexts << app_tag_bits;
constexpr int control_tag_base = synchronous_bit << 1;
enum control_tag : int {
    ack_tag = control_tag_base,  // {number, hash}: "I received message `number` of your rank's stream to mine"
    start_tag,                   // {number}: "my next message to you is number `number` of my rank's stream"
    abort_tag,                   // exit code (8 bytes), then the message: the job ends
    die_tag,                     // {}: outvoted (silent corruption): die as if crashed
    done_tag,                    // {}: "my program has ended; I send nothing more"
    printed_tag,                 // (empty): the message that ends the job is printed
    // Re-creating a lost replica (recreation.cpp): between the spare that
    // re-creates it and the processes of the program.
    query_tag,    // {}: "how many syncs have you passed? pass no more until I decide"
    synced_tag,   // {syncs passed, sync_answer}
    decide_tag,   // {rank, replica, sync}: the spare becomes that replica at that sync
    arrived_tag,  // {sync}: this process is at the sync of a re-creation
    go_tag,       // {rank, replica, survivor process}: the spare is that replica from now on
    joined_tag,   // {}: this process knows the spare is that replica
    abandon_tag,  // {}: the re-creation is off
    state_tag,    // bytes: the survivor's state for the re-created replica
    vote_tag,     // {source rank, number, hash}: what a sibling replica received
    // Collectives inside each replica set (set_collectives.hpp).
    result_tag,         // {index, hash}: the hash of this replica's result of a collective
    block_request_tag,  // {index, rank}: "send me your rank's block of that collective"
    block_tag,          // bytes: {index, rank, kept} and the block
    pushed_result_tag,  // bytes: {index} and every rank's block: a sibling's result, unasked
    entered_tag,        // {count}: "I have entered that many collectives" (to the members of a broken set)
    entered_with_tag,   // {count}: "I have entered that many blocking collectives shared with your rank" (collective_order.hpp)
    matched_tag,  // {number}: "my program took message `number` of your rank's stream to mine" (a synchronous send)
    progress_tag,  // never sent: probed for, to let MPI move large messages (the last tag)
};
enum class sync_answer : std::uint64_t { ready, ended, cannot };
inline int data_tag(int context, int tag) { return (context << app_tag_bits) | tag; }
/// A message this small travels whole in MPI's first packet (eager): its
/// send or receive is mostly done when MPI's call returns.
constexpr std::size_t small_message = 64 * 1024;

/// One buffer sent to several destinations (a round of a collective):
/// copied and hashed once for all of them.
struct same_data {
    const void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    std::shared_ptr<const std::vector<char>> bytes;  // the copy of a small message
    std::uint64_t hash = 0;
    bool hashed = false;
    bool of(const void* b, int c, MPI_Datatype t) const { return hashed && buf == b && count == c && type == t; }
};

/// A message sent by this process: one per (destination rank, number).
struct send_op {
    send_op() = default;
    send_op(const send_op&) = delete;  // its request points at it
    send_op& operator=(const send_op&) = delete;
    int dest = 0;              // logical rank
    std::uint64_t number = 0;  // in the stream from this rank to dest
    int tag = 0;               // MPI tag on the world
    int app_tag = 0;
    const void* buf = nullptr;
    std::shared_ptr<const void> owner;  // the memory of buf when it is a copy of the program's (MPI_Bsend)
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    bool synchronous = false;
    std::uint64_t hash = 0;  // of the bytes sent
    // The bytes sent instead of buf: a copy that lets the program reuse its
    // buffer at once (a small message; shared by the sends of one buffer in
    // a collective's round), or a fault-injected one.
    std::shared_ptr<const std::vector<char>> payload;
    bool buffered = false;  // the program's request completed when the copy was made
    enum class state : char { awaiting_ack, acked, sending, sent, not_needed };
    struct copy {
        state s = state::awaiting_ack;
        MPI_Request request = MPI_REQUEST_NULL;
        std::uint64_t hash = 0;  // what that replica of dest received (acked), or ours (sent)
        bool hash_known = false;
    };
    // By replica of dest, in the operation itself (no allocation per message).
    struct copies {
        std::array<copy, max_replicas> all;
        std::size_t n = 0;
        copy& operator[](std::size_t k) { return all[k]; }
        const copy& operator[](std::size_t k) const { return all[k]; }
        std::size_t size() const { return n; }
        copy* begin() { return all.data(); }
        copy* end() { return all.data() + n; }
        const copy* begin() const { return all.data(); }
        const copy* end() const { return all.data() + n; }
    } to;
    std::uint64_t collectives_passed = 0;  // world collectives this process had passed when it sent it
    std::uint64_t passed_with_dest = 0;    // the library's blocking collectives shared with dest, passed before it
    // A synchronous send: the processes of dest whose programs have taken
    // the message; the request waits for replica k's (synchronous_sends.cpp).
    std::vector<int> matched_by;
    bool matched = false;
    bool complete = false;
    int error = MPI_SUCCESS;
    send_request request;  // the program's
};

/// A message arriving at this process, from its number on.
struct inbound {
    int source = 0;          // logical rank
    int source_process = 0;  // where it comes from now
    std::uint64_t number = 0;
    int tag = 0;  // MPI tag on the world
    std::size_t bytes = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    enum class state : char { receiving, complete, hole } s = state::receiving;
    std::shared_ptr<recv_request> target;  // matched receive, or none: into `buffer`
    std::vector<char> buffer;
    bool direct = false;    // the receive is into the target's memory
    bool accepted = false;  // its copy agrees with the majority of this rank's replicas: the program may have it
};

class protocol {
public:
    static protocol& get();
    static bool initialized();
    /// Process `process` of `where`, talking through `net`, started without
    /// MPI_Init and without reading the environment: what unit tests drive,
    /// playing the other processes in `net` (the library's protocol is get()).
    ///     scripted_world net;
    ///     protocol p(net, layout(4, 2, 0), 0);
    /// It is get() while it lives, for the parts that reach the protocol
    /// through get() (collectives, requests).
    protocol(transport& net, const layout& where, int process);
    ~protocol();
    protocol(const protocol&) = delete;
    protocol& operator=(const protocol&) = delete;
    /// The job's other processes, as this protocol reaches them.
    transport& net() const { return *net_; }

    void init(int* argc, char*** argv, int required, int* provided);
    void finalize();
    /// Ends the whole job: every process exits with `code`. The message is
    /// printed once, by the lowest live process (several may find the same
    /// cause, or causes of one fault, at once: it prints the first it hears of).
    [[noreturn]] void abort_job(int code, const std::string& message);
    void deliver(inbound& in);

    /// rampart_replica_protect and rampart_replica_sync (recreation.cpp).
    void protect(void* data, std::size_t bytes);
    void sync();

    const layout& where() const { return layout_; }
    int rank() const { return rank_; }
    int replica() const { return replica_; }
    int process() const { return process_; }
    bool finalized() const { return finalized_; }
    /// A re-created replica running the program's set-up again.
    bool replaying() const { return replaying_; }

    /// Starts sending; the request completes when every live replica of the
    /// destination has the message.
    /// `same`: the sends of one buffer in a collective's round share it.
    std::shared_ptr<send_request> isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                        communicator* comm, int context, bool synchronous, same_data* same = nullptr);
    std::shared_ptr<recv_request> irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                                        communicator* comm, int context);
    /// A message that a receive could take now (Iprobe), or none.
    const inbound* probe(int source, int tag, communicator* comm, int context, MPI_Status* status);
    bool cancel(recv_request& r);
    /// MPI_Improbe: takes the message a receive could take now, so that
    /// no other receive can (none: nullptr). In a re-created replica's
    /// set-up, a copy of the logged message's envelope.
    std::shared_ptr<inbound> take_probed(int source, int tag, communicator* comm, int context, MPI_Status* status);
    /// MPI_Imrecv: receives a message that take_probed gave into r.
    std::shared_ptr<recv_request> receive_taken(const std::shared_ptr<inbound>& in, void* buf, int count,
                                                MPI_Datatype type, communicator* comm, int context);

    /// A synchronous send: whether the receiver's program has taken it
    /// (synchronous_sends.cpp).
    bool matched_everywhere(send_op& op);

    /// Moves everything along once; true if anything happened.
    bool progress();
    /// Progresses until nothing more is there to handle (a bounded number
    /// of rounds): a test or probe sees what MPI's own would, although
    /// progress() handles one message of MPI per call.
    void progress_pending() {
        for (int i = 0; i < 256 && progress(); ++i) {
        }
    }
    /// The program enters, or has passed, a blocking collective of the
    /// library on `c` (collective_order.cpp).
    void collective_entered(const communicator& c);
    void collective_passed(const communicator& c);
    /// Any error of MPI may mean a dead process: the protocol learns of it.
    void note_failure(int rc) { check_failures(rc); }
    void send_control(int process, int tag, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0);
    /// A collective that sends no message of the protocol counts as one
    /// for the ordered faults (fault_orders.hpp).
    void before_send() { kills_.before_message(static_cast<long>(messages_sent + 1)); }
    void after_send() { kills_.after_message(static_cast<long>(++messages_sent)); }
    /// Fault injection (RAMPART_FLIP_BITS): whether to flip a bit of these
    /// outgoing bytes, and the flip.
    bool flip_now(std::size_t bytes);
    bool flipping() const { return flip_rate_ > 0.0; }
    void flip_one(std::vector<char>& bytes, MPI_Datatype type = MPI_BYTE);
    /// Progresses until `done()` holds.
    template <class Done>
    void wait_until(Done done) {
        while (!done())
            if (!progress()) idle();
    }

    // Counters, for the report.
    std::uint64_t messages_sent = 0, acks_sent = 0, acks_received = 0, resent = 0, duplicates_dropped = 0,
                  bits_flipped = 0, corruptions_detected = 0, replicas_lost = 0;
    // Re-creation: states this process sent as a survivor; for a spare that
    // re-created a replica, when it began (its query) and when it had the
    // state, in microseconds since the epoch, and the state's size.
    std::uint64_t states_sent = 0, state_bytes = 0;
    std::int64_t recreation_began_us = 0, recreation_done_us = 0;
    long syncs() const { return syncs_; }

private:
    protocol() = default;
    void idle();
    void read_configuration();
    void check_tag_space() const;
    void size_tables();

    bool lowest_live_process() const;
    [[noreturn]] void on_abort(MPI_Message msg, const MPI_Status& st);
    [[noreturn]] void exit_after_printer(int code);
    void tell_every_live_process(int tag, const char* text, int bytes);
    /// Outvoted: dies as a crash would (the others recover from it).
    [[noreturn]] void die();

    // sending.cpp
    void prepare_payload(send_op& op, same_data* same);
    void route(const std::shared_ptr<send_op>& op, same_data* same);
    void start_copy(const std::shared_ptr<send_op>& op, int replica);
    void apply_ack(int from_process, std::uint64_t number, std::uint64_t hash);
    void check_copy_hash(send_op& op, int replica);
    bool test_sends();
    void finish(send_op& op);
    void decide_corruption(send_op& op);
    void take_over(int dead_replica);
    void send_or_hold(const std::shared_ptr<send_op>& op, int replica);
    bool may_send_copy(const send_op& op, int process) const;
    bool release_held();
    bool test_controls();

    // synchronous_sends.cpp
    void await_match(const std::shared_ptr<send_op>& op);
    void apply_matched(int from, std::uint64_t number);
    void tell_matched(const inbound& in);
    int partner(int rank) const;

    // receiving.cpp
    bool matches(const recv_request& r, const inbound& in) const;
    bool matches(const recv_request& r, int source, int tag) const;
    void fill_status(MPI_Status& st, const inbound& in, const communicator* comm) const;
    bool poll_world();
    void on_message(MPI_Message msg, const MPI_Status& st);
    void on_data(int from, MPI_Message msg, const MPI_Status& st);
    void stash_control(int from, std::uint64_t number);
    void replay_stash(int from);
    void accept_data(int from, std::uint64_t number, MPI_Message* msg, int tag, std::size_t bytes,
                     std::vector<char>* bytes_here);
    void receive(const std::shared_ptr<inbound>& in, MPI_Message* msg, std::vector<char>* bytes_here);
    bool test_inbound();
    void lost_in_flight(const std::shared_ptr<inbound>& in, int rc);
    void received(const std::shared_ptr<inbound>& in);
    std::shared_ptr<recv_request> match_posted(int source, int tag);
    std::shared_ptr<inbound> match_unexpected(const recv_request& r);

    // votes.cpp
    void vote_on(const std::shared_ptr<inbound>& in, std::uint64_t hash);
    void on_vote(int from, std::uint64_t source, std::uint64_t number, std::uint64_t hash);
    void check_vote(const std::pair<int, std::uint64_t>& key);
    void check_votes();
    void accept(inbound& in);

    // recreation.cpp: the spare's side
    void serve_as_spare();  // returns once this spare is a replica
    void ask_for_deaths(std::chrono::steady_clock::time_point& last);
    bool program_ended() const;
    bool may_coordinate(int* rank, int* replica) const;
    bool recreate(int rank, int replica);
    bool gather_replies(std::uint64_t* sync);
    bool wait_for_all(const std::vector<char>& from);
    void abandon();
    void broadcast(int tag, std::uint64_t a = 0, std::uint64_t b = 0, std::uint64_t c = 0);
    // recreation.cpp: the program's side
    bool held(long number) const;
    void join_recreation(long number);
    void on_recreation_control(int from, int tag, const std::uint64_t* words);
    void on_go(int from, int rank, int replica, int survivor);
    void forget_recreation();
    void tell_new_replica(int to, int rank, int replica);

    // replica_state.cpp
    void snapshot();
    void send_state(int to);
    void on_state(MPI_Message msg, const MPI_Status& st);
    void install_state();
    void log_delivery(const inbound& in);
    bool replay_receive(recv_request& r);
    const inbound* replay_probe(int source, int tag, communicator* comm, int context, MPI_Status* status);
    void finish_replay();

    // collective_order.cpp
    bool collectives_ordered() const;
    void tell_entered_with(int rank);
    void tell_entered_with_everyone();
    // failures.cpp
    bool check_failures(int rc);
    void on_death(int process);
    void switch_source(int rank);
    void settle_receives_from(int process);
    bool rank_ended(int rank) const;
    [[noreturn]] void lost_every_replica(int rank);

    transport* net_ = &mpi_world();
    protocol* replaced_ = nullptr;  // the instance of get() that a test's protocol stands in for
    layout layout_;
    int process_ = 0, rank_ = 0, replica_ = 0;
    bool started_ = false;  // MPI_Init has run

    // Sending: per destination rank, the next number and the messages whose
    // copies are not all confirmed; acks that came before our own send.
    std::vector<std::uint64_t> next_number_;
    std::vector<pending_sends> pending_;
    std::vector<std::map<std::pair<std::uint64_t, int>, std::uint64_t>>
        early_acks_;                               // dest -> (number, replica) -> hash
    std::list<std::shared_ptr<send_op>> sending_;  // with a copy in flight
    // Copies to the other replica set, in the place of a dead sibling, held
    // until their receiver has entered the collectives this process passed
    // before sending them (in the order they were made).
    std::list<std::pair<std::shared_ptr<send_op>, int>> held_;
    collective_order order_;
    // Synchronous sends whose receivers' programs have not all taken them,
    // per destination rank by number; and those takings heard of before
    // this replica sent the message (process per number).
    std::vector<std::map<std::uint64_t, std::shared_ptr<send_op>>> awaiting_match_;
    std::vector<std::multimap<std::uint64_t, int>> early_matches_;
    struct control_send {
        MPI_Request request = MPI_REQUEST_NULL;
        std::uint64_t words[3] = {0, 0, 0};
    };
    std::list<control_send> controls_;
    std::size_t buffered_messages_ = 0;  // copies of small messages not yet confirmed
    static constexpr int spin_polls = 50;
    int idle_polls_ = 0;
    // Per process this one sends copies to: whether the receiver knows the
    // number of the next copy, and that number.
    std::vector<std::uint64_t> channel_next_;
    std::vector<char> channel_numbered_;

    // Receiving: per source rank, where its messages come from now and the
    // number of the next new one; per process, the number of its next
    // message to this one (known when it is the source of its rank's stream
    // here, or said by a start control), and what it sent before it was.
    std::vector<int> source_process_;
    std::vector<std::uint64_t> next_expected_;
    std::vector<std::map<std::uint64_t, std::shared_ptr<inbound>>> holes_;
    std::vector<std::uint64_t> next_from_;
    std::vector<char> numbered_;
    struct stashed {
        bool is_start = false;
        std::uint64_t start = 0;
        int tag = 0;
        std::vector<char> bytes;
    };
    std::vector<std::deque<stashed>> stash_;
    std::list<std::shared_ptr<inbound>> receiving_;    // an MPI receive in flight
    std::list<std::shared_ptr<inbound>> unexpected_;   // not matched, in arrival order
    std::deque<std::shared_ptr<recv_request>> posted_;  // not matched, in posting order (a deque: no allocation per receive)

    fault_orders kills_;
    // Silent corruption injection (RAMPART_FLIP_BITS, RAMPART_SEED).
    double flip_rate_ = 0.0;
    std::mt19937_64 flip_random_;
    // Votes of this rank's replicas on what each of them received, per
    // (source rank, number), with three replicas or more.
    struct vote {
        std::shared_ptr<inbound> in;  // this process's copy, once received
        std::uint64_t own = 0;
        std::vector<std::pair<int, std::uint64_t>> others;  // (replica, hash)
        bool decided = false;
    };
    std::map<std::pair<int, std::uint64_t>, vote> votes_;
    std::vector<char> done_from_;  // per process: it said its program ended
    bool any_death_ = false;
    bool own_set_broken_ = false;  // a process of this replica set died (collective_order.cpp)
    int printed_seen_ = 0;  // the printer of the job's end has printed
    bool finalized_ = false;

    // Re-creation of lost replicas by spares (recreation.cpp).
    long syncs_ = 0;  // rampart_replica_sync calls returned
    struct coordination {
        int spare = -1;       // the spare re-creating a replica, or none
        long hold_after = 0;  // this process passes no sync beyond it until the spare decides
        int rank = -1, replica = -1;
        long sync = 0;  // decided: the sync at which it happens
        bool go = false;
        int survivor = -1;  // sends the spare its state
    } coordination_;
    int deferred_query_ = -1;  // a spare that asked while another's re-creation was under way
    // What this process received while it waited at a re-creation's sync
    // for the go: acknowledged and voted on without the new replica.
    struct noted_message {
        int source = 0;
        std::uint64_t number = 0, hash = 0;
    };
    std::vector<noted_message> noted_;
    bool noting_ = false;
    // The spare's view of the others: answers to its query, arrivals, joins.
    std::vector<std::uint64_t> answers_;
    std::vector<char> answered_, arrived_, joined_;
    std::vector<char> used_spare_;  // per process: a spare that took a replica's place
    std::vector<int> recreations_;  // per replica (rank * R + replica): how often spares took its place
    bool recreation_impossible_ = false;

    // What a survivor sends a re-created replica (replica_state.cpp).
    struct region {
        void* data;
        std::size_t bytes;
    };
    std::vector<region> regions_;
    struct logged_message {
        int source = 0, tag = 0;
        std::vector<char> bytes;
        bool taken = false;
    };
    // The messages this process's program received before its first sync,
    // kept when there are spares: a re-created replica runs the program's
    // set-up again and takes them from here instead of from the senders.
    std::vector<logged_message> setup_log_;
    std::size_t setup_log_bytes_ = 0;
    bool logging_ = false, setup_log_lost_ = false;
    std::vector<char> snapshot_;  // the state at the sync of a re-creation
    std::vector<char> state_;     // received, until the program's first sync takes the regions
    bool have_state_ = false;
    bool replaying_ = false;  // a re-created replica running the set-up again
    int saved_stdout_ = -1;
    inbound replayed_;  // what replay_probe found
};

}  // namespace rampart::replica::detail
