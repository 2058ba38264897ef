// The program's communicators and groups: made from the logical ranks, with
// the ids of new ones agreed by a replicated collective.

#include "api.hpp"
#include "collectives.hpp"

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

MPI_Comm make(int id, std::vector<int> ranks, const rp::communicator* like) {
    rp::communicator* c = rp::communicators::get().make(id, std::move(ranks));
    c->my_rank = c->rank_of(rp::protocol::get().rank());
    if (like) c->errhandler = like->errhandler;
    return rp::communicators::get().handle(c);
}

rp::group* group_of(MPI_Group g) {
    static rp::group empty;
    if (g == MPI_GROUP_EMPTY) return &empty;
    return rp::to_group(g);
}

}  // namespace

#define RAMPART_COMM(handle, fn)                          \
    rp::started(fn);                                      \
    int rc = MPI_SUCCESS;                                 \
    rp::communicator* c = rp::find_comm(handle, fn, &rc); \
    if (!c) return rc

extern "C" {

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
    RAMPART_COMM(comm, "MPI_Comm_dup");
    *newcomm = make(agree_on_id(c), c->ranks, c);
    rp::communicators::get().find(*newcomm)->dims = c->dims;
    rp::communicators::get().find(*newcomm)->periods = c->periods;
    return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
    RAMPART_COMM(comm, "MPI_Comm_split");
    const auto n = static_cast<std::size_t>(c->size());
    std::vector<int> all(2 * n), counts(n, 2), displs(n);
    for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<int>(2 * i);
    const int mine[2] = {color, key};
    rp::run(rp::allgatherv(mine, 2, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, c));
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

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
    RAMPART_COMM(comm, "MPI_Comm_create");
    rp::group* g = group_of(group);
    if (!g) return rp::program_error(c, MPI_ERR_GROUP, "MPI_Comm_create", "an invalid group");
    const int id = agree_on_id(c);
    const bool member = std::find(g->ranks.begin(), g->ranks.end(), rp::protocol::get().rank()) != g->ranks.end();
    *newcomm = member ? make(id, g->ranks, c) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm* comm) {
    RAMPART_COMM(*comm, "MPI_Comm_free");
    if (c == rp::communicators::get().world() || c == rp::communicators::get().self())
        return rp::program_error(c, MPI_ERR_COMM, "MPI_Comm_free", "MPI_COMM_WORLD or MPI_COMM_SELF");
    rp::communicators::get().free(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
    RAMPART_COMM(comm1, "MPI_Comm_compare");
    rp::communicator* d = rp::find_comm(comm2, "MPI_Comm_compare", &rc);
    if (!d) return rc;
    auto a = c->ranks, b = d->ranks;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    *result = c == d ? MPI_IDENT : c->ranks == d->ranks ? MPI_CONGRUENT : a == b ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
    RAMPART_COMM(comm, "MPI_Comm_group");
    *group = rp::group_handle(rp::new_group(c->ranks));
    return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int* size) {
    rp::group* g = group_of(group);
    if (!g) return MPI_ERR_GROUP;
    *size = static_cast<int>(g->ranks.size());
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int* rank) {
    rp::group* g = group_of(group);
    if (!g) return MPI_ERR_GROUP;
    auto it = std::find(g->ranks.begin(), g->ranks.end(), rp::started("MPI_Group_rank").rank());
    *rank = it == g->ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - g->ranks.begin());
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    rp::group* g = group_of(group);
    if (!g || n < 0) return MPI_ERR_GROUP;
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
        if (ranks[i] < 0 || ranks[i] >= static_cast<int>(g->ranks.size())) return MPI_ERR_RANK;
        out.push_back(g->ranks[static_cast<std::size_t>(ranks[i])]);
    }
    *newgroup = rp::group_handle(rp::new_group(std::move(out)));
    return MPI_SUCCESS;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    rp::group* g = group_of(group);
    if (!g || n < 0) return MPI_ERR_GROUP;
    std::vector<int> out;
    for (int i = 0; i < static_cast<int>(g->ranks.size()); ++i)
        if (std::find(ranks, ranks + n, i) == ranks + n) out.push_back(g->ranks[static_cast<std::size_t>(i)]);
    *newgroup = rp::group_handle(rp::new_group(std::move(out)));
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    rp::group *a = group_of(group1), *b = group_of(group2);
    if (!a || !b) return MPI_ERR_GROUP;
    for (int i = 0; i < n; ++i) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>(a->ranks.size())) return MPI_ERR_RANK;
        auto it = std::find(b->ranks.begin(), b->ranks.end(), a->ranks[static_cast<std::size_t>(ranks1[i])]);
        ranks2[i] = it == b->ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - b->ranks.begin());
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group* group) {
    if (*group != MPI_GROUP_EMPTY) {
        rp::group* g = rp::to_group(*group);
        if (!g) return MPI_ERR_GROUP;
        rp::free_group(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

}  // extern "C"
