// The program's groups: lists of logical ranks, handled locally.

#include "api.hpp"

#include <algorithm>

namespace rp = rampart::replica::detail;

namespace {

int made(std::vector<int> ranks, MPI_Group* out) {
    *out = ranks.empty() ? MPI_GROUP_EMPTY : rp::group_handle(rp::new_group(std::move(ranks)));
    return MPI_SUCCESS;
}

bool has(const rp::group& g, int logical) { return std::find(g.ranks.begin(), g.ranks.end(), logical) != g.ranks.end(); }

// The ranks of the triplets (first, last, stride) of a range call, or an error.
int expand(const rp::group& g, int n, const int ranges[][3], std::vector<int>* out) {
    const int size = static_cast<int>(g.ranks.size());
    for (int i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size) return MPI_ERR_RANK;
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(r);
    }
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Group_size(MPI_Group group, int* size) {
    rp::group* g = rp::to_group(group);
    if (!g) return MPI_ERR_GROUP;
    *size = static_cast<int>(g->ranks.size());
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int* rank) {
    rp::group* g = rp::to_group(group);
    if (!g) return MPI_ERR_GROUP;
    auto it = std::find(g->ranks.begin(), g->ranks.end(), rp::started("MPI_Group_rank").rank());
    *rank = it == g->ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - g->ranks.begin());
    return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
    rp::group* g = rp::to_group(group);
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
    rp::group* g = rp::to_group(group);
    if (!g || n < 0) return MPI_ERR_GROUP;
    std::vector<int> out;
    for (int i = 0; i < static_cast<int>(g->ranks.size()); ++i)
        if (std::find(ranks, ranks + n, i) == ranks + n) out.push_back(g->ranks[static_cast<std::size_t>(i)]);
    *newgroup = rp::group_handle(rp::new_group(std::move(out)));
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    rp::group *a = rp::to_group(group1), *b = rp::to_group(group2);
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

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    rp::group* g = rp::to_group(group);
    std::vector<int> picked;
    if (!g) return MPI_ERR_GROUP;
    if (int rc = expand(*g, n, ranges, &picked)) return rc;
    return MPI_Group_incl(group, static_cast<int>(picked.size()), picked.data(), newgroup);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
    rp::group* g = rp::to_group(group);
    std::vector<int> picked;
    if (!g) return MPI_ERR_GROUP;
    if (int rc = expand(*g, n, ranges, &picked)) return rc;
    return MPI_Group_excl(group, static_cast<int>(picked.size()), picked.data(), newgroup);
}

// In the order of the first group, then the second's own (as MPI orders them).
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    rp::group *a = rp::to_group(group1), *b = rp::to_group(group2);
    if (!a || !b) return MPI_ERR_GROUP;
    std::vector<int> out = a->ranks;
    for (int r : b->ranks)
        if (!has(*a, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    rp::group *a = rp::to_group(group1), *b = rp::to_group(group2);
    if (!a || !b) return MPI_ERR_GROUP;
    std::vector<int> out;
    for (int r : a->ranks)
        if (has(*b, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
    rp::group *a = rp::to_group(group1), *b = rp::to_group(group2);
    if (!a || !b) return MPI_ERR_GROUP;
    std::vector<int> out;
    for (int r : a->ranks)
        if (!has(*b, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
    rp::group *a = rp::to_group(group1), *b = rp::to_group(group2);
    if (!a || !b) return MPI_ERR_GROUP;
    auto x = a->ranks, y = b->ranks;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = a->ranks == b->ranks ? MPI_IDENT : x == y ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

}  // extern "C"
