#pragma once
// Collectives on the program's MPI_COMM_WORLD run by MPI itself, inside each
// replica set (replica k of every rank), with one or two replicas and no
// spares. Each is a gathering of every rank's block (an Allreduce gathers
// the operands and combines them here, in the same order as the library's
// own collectives), so that any block can also be had from any live replica
// of its rank:
//
// - Fault-free, a set gathers with MPI_Iallgatherv on its own communicator
//   (set_gathering.cpp); every `batch` collectives its members send the hash
//   of all their results to their sibling replica, which compares it with
//   its own (silent corruption stops the job); the sets stay within
//   `window` collectives of each other.
// - A process whose set lost a member, or whose gathering failed (or left a
//   block unwritten), revokes its set's communicator (so that no member
//   waits for it in MPI) and from then on takes each result from its
//   sibling, which sends them unasked once it knows, or pulls each rank's
//   block from the live replicas of that rank (set_pulling.cpp). Every
//   process keeps its own last `kept` blocks to serve such pulls. Every
//   copy of a block is the same bytes, so the processes need no agreement
//   on where each switched: the result is the same either way.
// - A collective also orders the program's messages: a process may not
//   leave it before the processes it exchanges messages with have entered
//   it (the live members of its own set), or a receive from any source
//   could take a message sent after the collective. A result had from the
//   other set proves only that set's members entered, so the members of a
//   broken set tell each other how many collectives they have entered, and
//   tell the replicas that send in the place of their dead members, which
//   wait for them as well.

#include <mpi.h>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <vector>

namespace rampart::replica::detail {

struct communicator;

class set_collectives {
public:
    static set_collectives& get();

    /// At MPI_Init, on every process: makes the set's communicator when the
    /// job can use it.
    void start();
    bool covers(const communicator* c) const;

    /// Each returns false when it does not apply to these arguments (the
    /// library's collectives run instead).
    bool barrier();
    bool allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                    const int* displs, MPI_Datatype recvtype);
    bool allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op);

    /// World collectives this process has passed: a message sent now
    /// comes after them.
    std::uint64_t passed() const { return done_; }
    /// Whether a message sent after `passed` collectives may go to
    /// `process` of the other set now (in the place of a dead sibling): it
    /// has entered them all, so no receive of an earlier one can take it.
    bool may_send(int process, std::uint64_t passed) const {
        return !on_ || passed == 0 || members_entered_[static_cast<std::size_t>(process)] >= passed;
    }

    /// At MPI_Finalize: the last results are compared.
    void finish();

    // From the protocol.
    void on_death(int process);
    void on_result(int from, const std::uint64_t* words);
    void on_request(int from, const std::uint64_t* words);
    void on_block(MPI_Message msg, const MPI_Status& st);
    void on_pushed(MPI_Message msg, const MPI_Status& st);
    void on_entered(int from, std::uint64_t count);
    /// Tests the blocks and results on their way to other processes; true if any left.
    bool progress();

    std::uint64_t gathered_in_set = 0, gathered_by_pulling = 0;

private:
    /// Where each rank's block goes in `out`, in bytes.
    struct gathering {
        const char* name;
        const char* mine;  // this rank's block
        char* out;
        std::vector<int> bytes, displs;
        MPI_Datatype type = MPI_BYTE;  // of the blocks: their bytes that hold no value are not compared
    };
    void gather(gathering& g);
    void keep_mine(const gathering& g, std::uint64_t index);
    bool gather_in_set(gathering& g);
    int gather_marked(gathering& g);
    int gather_with_index(gathering& g);
    int wait_in_set(const void* send, int count, void* out, const int* counts, const int* displs);
    void pull(gathering& g, std::uint64_t index);
    void ask(int rank, std::uint64_t index);
    [[noreturn]] void kept_nowhere(std::size_t rank, std::uint64_t index);
    bool pulled() const;
    void push_result(const gathering& g, std::uint64_t index);
    void send_last(int to, int tag);
    bool take_pushed(gathering& g, std::uint64_t index);
    void serve(int to, std::uint64_t index);
    void serve_deferred();
    void leave_set();
    void tell_members();
    bool members_entered(int replica, std::uint64_t index) const;
    void compare(std::uint64_t index);
    int sibling() const;  // the other live replica of this rank, or -1
    void tell_sibling();

    static constexpr std::uint64_t batch = 4, window = 12, kept = 32;
    bool on_ = false, in_set_ = false;
    std::uint64_t next_ = 0;     // the index of the next collective
    std::uint64_t entered_ = 0;  // collectives whose own block is kept
    std::uint64_t done_ = 0;     // collectives whose result this process has
    struct kept_block {
        std::uint64_t index = ~std::uint64_t{0};
        std::unique_ptr<char[]> data;
        std::size_t size = 0, capacity = 0;
    };
    std::vector<kept_block> mine_ = std::vector<kept_block>(kept);
    const char* sent_ = nullptr;  // this process's block of the collective under way
    std::vector<char> outgoing_, staging_, operands_;
    // Hashes of all the results up to an index (exclusive): this process's
    // and its sibling's, until compared.
    std::uint64_t chain_ = 0, told_ = 0;
    std::map<std::uint64_t, std::uint64_t> own_hash_, sibling_hash_;
    std::uint64_t sibling_results_ = 0;  // how many results the sibling has told of
    std::vector<std::pair<int, std::uint64_t>> deferred_;  // (process, index) asked before this one got there
    struct block_send {
        MPI_Request request = MPI_REQUEST_NULL;
        std::vector<char> bytes;  // {index, rank, kept} then the block
    };
    std::list<block_send> serving_;
    // The pulling under way: its index, and per rank whether its block came
    // and which processes were asked (and not yet answered).
    gathering* pulling_ = nullptr;
    std::uint64_t pulling_index_ = 0;
    std::vector<char> have_;
    std::vector<std::vector<int>> asked_;
    // Once the sibling's set is broken, this process sends the sibling each
    // of its results unasked: the sibling then need not pull blocks one by
    // one. What the sibling sent, not yet taken, and one past the last index.
    bool pushing_ = false;
    // How many collectives each process of this set has entered, as it
    // told (once the set is broken): a result had from elsewhere is taken
    // only once every live member has entered that collective.
    std::vector<std::uint64_t> members_entered_;
    std::map<std::uint64_t, std::vector<char>> pushed_;
    std::uint64_t pushed_next_ = 0;
};

}  // namespace rampart::replica::detail
