#pragma once
// The program's communicators and groups: logical ranks only. The handles
// the program holds are addresses of these, but for MPI_COMM_WORLD and
// MPI_COMM_SELF, which stand for the logical world and this rank alone.

#include <mpi.h>

#include <bitset>
#include <string>
#include <vector>

namespace rampart::replica::detail {

struct communicator {
    int id = 0;              // contexts 2*id (point-to-point) and 2*id + 1 (collectives)
    std::vector<int> ranks;  // rank in this communicator -> logical rank
    int my_rank = 0;
    std::vector<int> dims, periods;  // a Cartesian topology, when it has one
    std::string name;
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    int collectives = 0;  // started on it: the next one's tag
    std::vector<std::pair<int, void*>> attributes;  // (keyval, value) in the order they were set
    // Operations not yet complete that use it (comm_use); a communicator
    // the program freed lives until they are done, as MPI_Comm_free
    // promises (its id may be taken by a new one meanwhile).
    int uses = 0;
    bool freed = false;

    int size() const { return static_cast<int>(ranks.size()); }
    int p2p() const { return 2 * id; }
    int coll() const { return 2 * id + 1; }
    /// Rank in this communicator of a logical rank, or -1.
    int rank_of(int logical) const;
};

/// Keeps a communicator alive while an operation on it (a receive, a
/// nonblocking collective's schedule) is not complete.
class comm_use {
public:
    comm_use() = default;
    explicit comm_use(communicator* c);
    comm_use(const comm_use&) = delete;
    comm_use& operator=(const comm_use&) = delete;
    comm_use(comm_use&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
    comm_use& operator=(comm_use&& o) noexcept;
    ~comm_use();
    communicator* get() const { return c_; }

private:
    communicator* c_ = nullptr;
};

struct group {
    std::vector<int> ranks;  // logical ranks
};

constexpr int max_communicators = 512;
/// The id kept for agreeing on a new communicator's id among a group's
/// members (MPI_Comm_create_group): no communicator has it.
constexpr int group_creation_id = 2;
using context_ids = std::bitset<max_communicators>;

/// Every communicator this process holds, world and self included.
class communicators {
public:
    static communicators& get();
    void make_predefined(int ranks, int my_rank);
    communicator* world() const { return world_; }
    const std::vector<communicator*>& all() const { return all_; }
    communicator* self() const { return self_; }

    /// The communicator behind a handle; nullptr for one this layer did not
    /// make (the caller reports it).
    communicator* find(MPI_Comm c) const;
    MPI_Comm handle(communicator* c) const;
    /// A new communicator with the given id and logical ranks (this rank is in them).
    communicator* make(int id, std::vector<int> ranks);
    /// The program frees it: its handle and its id are free at once; it is
    /// deleted once no operation uses it.
    void free(communicator* c);
    /// Ids free on this process, to intersect with the others'.
    context_ids free_ids() const { return ~used_; }

private:
    std::vector<communicator*> all_;  // valid handles
    context_ids used_;
    communicator* world_ = nullptr;
    communicator* self_ = nullptr;
};

group* to_group(MPI_Group g);  // nullptr: not one of this layer's; MPI_GROUP_EMPTY is one
MPI_Group group_handle(group* g);
group* new_group(std::vector<int> ranks);
void free_group(group* g);

}  // namespace rampart::replica::detail
