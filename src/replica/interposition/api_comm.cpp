// The program's communicators and groups: made from the logical ranks, with
// the ids of new ones agreed by a replicated collective.

#include "api.hpp"
#include "collectives.hpp"
#include "entry_points.hpp"
#include "nodes.hpp"

#include <algorithm>
#include <tuple>

namespace rp = rampart::replica::detail;

namespace {

// The lowest id free on every process of `parent`.
int agree_on_id(rp::communicator* parent) {
    const rp::context_ids mine = rp::communicators::get().free_ids();
    std::uint64_t words[rp::max_communicators / 64] = {};
    for (int i = 0; i < rp::max_communicators; ++i)
        if (mine.test(static_cast<std::size_t>(i))) words[i / 64] |= std::uint64_t{1} << (i % 64);
    rp::run(rp::allreduce(MPI_IN_PLACE, words, rp::max_communicators / 64, MPI_UINT64_T, MPI_BAND, parent));
    for (int i = 0; i < rp::max_communicators; ++i)
        if (words[i / 64] >> (i % 64) & 1) return i;
    rp::protocol::get().abort_job(6, "more than " + std::to_string(rp::max_communicators) + " communicators at once");
}

// A communicator over the members of `g` alone, which only they create
// (MPI_Comm_create_group, MPI_Comm_create_from_group): the id is agreed on
// a context kept for this, with tags from the program's tag, so that
// creations of other tags in flight together stay apart.
int agree_in_group(const rp::group& g, int tag, const rp::communicator* errors, const char* fn, int* id) {
    // On the heap, deleted by its last use: a received message of the
    // agreement may outlive this call (with three replicas or more, until
    // the siblings have voted on it).
    auto* members = new rp::communicator();
    members->freed = true;
    const rp::comm_use in_use(members);
    members->id = rp::group_creation_id;
    members->ranks = g.ranks;
    members->my_rank = members->rank_of(rp::protocol::get().rank());
    if (members->my_rank < 0)
        return rp::program_error(errors, MPI_ERR_GROUP, fn, "called by a rank that is not in the group");
    members->collectives = tag & rp::max_app_tag;
    *id = agree_on_id(members);
    return MPI_SUCCESS;
}

MPI_Comm make(int id, std::vector<int> ranks, const rp::communicator* like) {
    rp::communicator* c = rp::communicators::get().make(id, std::move(ranks));
    c->my_rank = c->rank_of(rp::protocol::get().rank());
    if (like) c->errhandler = like->errhandler;
    return rp::communicators::get().handle(c);
}

// MPI_COMM_TYPE_HW_GUIDED asked for the shared-memory domain, the node.
bool guided_to_node(MPI_Info info) {
    if (info == MPI_INFO_NULL) return false;
    char value[64] = {};
    int length = sizeof value - 1, flag = 0;
    PMPI_Info_get_string(info, "mpi_hw_resource_type", &length, value, &flag);
    return flag && std::string(value) == "mpi_shared_memory";
}

}  // namespace

namespace rampart::replica::detail {

communicator* duplicate(communicator& c) {
    MPI_Comm made = make(agree_on_id(&c), c.ranks, &c);
    communicator* d = communicators::get().find(made);
    d->dims = c.dims;
    d->periods = c.periods;
    return d;
}

}  // namespace rampart::replica::detail

namespace rampart::replica::detail::entry {

// Done at the call (an id is agreed at once): a request is complete.
int comm_dup(communicator* c, MPI_Comm* newcomm, MPI_Request* request, const char*) {
    communicator* made = duplicate(*c);
    if (int rc = copy_attributes(*c, *made)) {
        delete_attributes(*made);
        communicators::get().free(made);
        return rc;
    }
    *newcomm = communicators::get().handle(made);
    if (request) *request = to_handle(std::make_shared<keep_alive>(nullptr));
    return MPI_SUCCESS;
}

int comm_split(communicator* c, int color, int key, MPI_Comm* newcomm, const char*) {
    const auto n = static_cast<std::size_t>(c->size());
    std::vector<int> all(2 * n), counts(n, 2), displs(n);
    for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<int>(2 * i);
    const int mine[2] = {color, key};
    run(allgatherv(mine, 2, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, c));
    const int id = agree_on_id(c);
    if (color == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    std::vector<std::tuple<int, int, int>> members;  // (key, old rank, logical rank)
    for (int i = 0; i < c->size(); ++i)
        if (all[static_cast<std::size_t>(2 * i)] == color)
            members.emplace_back(all[static_cast<std::size_t>(2 * i + 1)], i, c->ranks[static_cast<std::size_t>(i)]);
    std::sort(members.begin(), members.end());
    std::vector<int> ranks;
    for (auto& m : members) ranks.push_back(std::get<2>(m));
    *newcomm = make(id, std::move(ranks), c);
    return MPI_SUCCESS;
}

// The ranks whose first replica started on this rank's node: every replica
// of a rank finds the same, wherever it runs.
int comm_split_type(communicator* c, int split_type, int key, MPI_Info info, MPI_Comm* newcomm, const char* fn) {
    int color = MPI_UNDEFINED;
    if (split_type == MPI_COMM_TYPE_SHARED || split_type == OMPI_COMM_TYPE_HOST || split_type == OMPI_COMM_TYPE_BOARD)
        color = node_of_rank(protocol::get().rank());
    else if (split_type == OMPI_COMM_TYPE_CLUSTER)
        color = 0;
    else if (split_type == MPI_COMM_TYPE_HW_GUIDED && guided_to_node(info))
        color = node_of_rank(protocol::get().rank());
    else if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
             split_type != MPI_COMM_TYPE_HW_UNGUIDED)
        return program_error(c, MPI_ERR_ARG, fn,
                             "split type " + std::to_string(split_type) +
                                 ": under replication, communicators split by node or the whole cluster only");
    return comm_split(c, color, key, newcomm, fn);
}

int comm_create(communicator* c, group* g, MPI_Comm* newcomm, const char*) {
    const int id = agree_on_id(c);
    const bool member = std::find(g->ranks.begin(), g->ranks.end(), protocol::get().rank()) != g->ranks.end();
    *newcomm = member ? make(id, g->ranks, c) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int comm_create_group(communicator* c, group* g, int tag, MPI_Comm* newcomm, const char* fn) {
    int id = 0;
    if (int rc = agree_in_group(*g, tag, c, fn, &id)) return rc;
    *newcomm = make(id, g->ranks, c);
    return MPI_SUCCESS;
}

int comm_create_from_group(group* g, const char* stringtag, MPI_Errhandler errhandler, MPI_Comm* newcomm,
                           const char* fn) {
    int id = 0;
    const auto tag = static_cast<int>(std::hash<std::string>{}(stringtag ? stringtag : ""));
    if (int rc = agree_in_group(*g, tag, communicators::get().self(), fn, &id)) return rc;
    *newcomm = make(id, g->ranks, nullptr);
    if (errhandler != MPI_ERRHANDLER_NULL) MPI_Comm_set_errhandler(*newcomm, errhandler);
    return MPI_SUCCESS;
}

int comm_free(MPI_Comm* handle, const char* fn) {
    int rc = MPI_SUCCESS;
    communicator* c = find_comm(*handle, fn, &rc);
    if (!c) return rc;
    if (c == communicators::get().world() || c == communicators::get().self())
        return program_error(c, MPI_ERR_COMM, fn, "MPI_COMM_WORLD or MPI_COMM_SELF");
    if ((rc = delete_attributes(*c))) return rc;
    communicators::get().free(c);
    *handle = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int comm_compare(communicator* c, communicator* d, int* result, const char*) {
    auto a = c->ranks, b = d->ranks;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    *result = c == d ? MPI_IDENT : c->ranks == d->ranks ? MPI_CONGRUENT : a == b ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int comm_group(communicator* c, MPI_Group* group, const char*) {
    *group = group_handle(new_group(c->ranks));
    return MPI_SUCCESS;
}

int comm_get_parent(MPI_Comm* parent, const char*) {
    *parent = MPI_COMM_NULL;  // no process of a replicated job is spawned
    return MPI_SUCCESS;
}

// Hints: none changes what this layer does, and MPI_Comm_get_info gives
// the hints in use, so none (as MPI does with hints it does not know).
int comm_set_info(communicator*, MPI_Info, const char*) { return MPI_SUCCESS; }

int comm_get_info(communicator*, MPI_Info* info_used, const char*) { return PMPI_Info_create(info_used); }

}  // namespace rampart::replica::detail::entry
