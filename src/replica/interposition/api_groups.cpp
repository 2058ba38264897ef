// The program's groups: lists of logical ranks, handled locally.

#include "api.hpp"
#include "entry_points.hpp"

#include <algorithm>

namespace rampart::replica::detail::entry {

namespace {

int made(std::vector<int> ranks, MPI_Group* out) {
    *out = ranks.empty() ? MPI_GROUP_EMPTY : group_handle(new_group(std::move(ranks)));
    return MPI_SUCCESS;
}

bool has(const group& g, int logical) { return std::find(g.ranks.begin(), g.ranks.end(), logical) != g.ranks.end(); }

int size_of(const group& g) { return static_cast<int>(g.ranks.size()); }

// The ranks of the triplets (first, last, stride) of a range call, or an error.
int expand(const group& g, int n, const int ranges[][3], std::vector<int>* out, const char* fn) {
    for (int i = 0; i < n; ++i) {
        const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= size_of(g) || last < 0 || last >= size_of(g))
            return program_error(communicators::get().self(), MPI_ERR_RANK, fn,
                                 "a range outside a group of " + std::to_string(size_of(g)));
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(r);
    }
    return MPI_SUCCESS;
}

}  // namespace

int group_size(group* g, int* size, const char*) {
    *size = size_of(*g);
    return MPI_SUCCESS;
}

int group_rank(group* g, int* rank, const char*) {
    auto it = std::find(g->ranks.begin(), g->ranks.end(), protocol::get().rank());
    *rank = it == g->ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - g->ranks.begin());
    return MPI_SUCCESS;
}

int group_incl(group* g, int n, const int ranks[], MPI_Group* newgroup, const char* fn) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i) {
        if (ranks[i] < 0 || ranks[i] >= size_of(*g))
            return program_error(communicators::get().self(), MPI_ERR_RANK, fn,
                                 "rank " + std::to_string(ranks[i]) + " of a group of " + std::to_string(size_of(*g)));
        out.push_back(g->ranks[static_cast<std::size_t>(ranks[i])]);
    }
    *newgroup = group_handle(new_group(std::move(out)));
    return MPI_SUCCESS;
}

int group_excl(group* g, int n, const int ranks[], MPI_Group* newgroup, const char*) {
    std::vector<int> out;
    for (int i = 0; i < size_of(*g); ++i)
        if (std::find(ranks, ranks + n, i) == ranks + n) out.push_back(g->ranks[static_cast<std::size_t>(i)]);
    *newgroup = group_handle(new_group(std::move(out)));
    return MPI_SUCCESS;
}

int group_range(group* g, int n, int ranges[][3], bool include, MPI_Group* newgroup, const char* fn) {
    std::vector<int> picked;
    if (int rc = expand(*g, n, ranges, &picked, fn)) return rc;
    const int count = static_cast<int>(picked.size());
    return include ? group_incl(g, count, picked.data(), newgroup, fn)
                   : group_excl(g, count, picked.data(), newgroup, fn);
}

int group_translate_ranks(group* a, int n, const int ranks1[], group* b, int ranks2[], const char* fn) {
    for (int i = 0; i < n; ++i) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= size_of(*a))
            return program_error(communicators::get().self(), MPI_ERR_RANK, fn,
                                 "rank " + std::to_string(ranks1[i]) + " of a group of " + std::to_string(size_of(*a)));
        auto it = std::find(b->ranks.begin(), b->ranks.end(), a->ranks[static_cast<std::size_t>(ranks1[i])]);
        ranks2[i] = it == b->ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - b->ranks.begin());
    }
    return MPI_SUCCESS;
}

// In the order of the first group, then the second's own (as MPI orders them).
int group_union(group* a, group* b, MPI_Group* newgroup, const char*) {
    std::vector<int> out = a->ranks;
    for (int r : b->ranks)
        if (!has(*a, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int group_intersection(group* a, group* b, MPI_Group* newgroup, const char*) {
    std::vector<int> out;
    for (int r : a->ranks)
        if (has(*b, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int group_difference(group* a, group* b, MPI_Group* newgroup, const char*) {
    std::vector<int> out;
    for (int r : a->ranks)
        if (!has(*b, r)) out.push_back(r);
    return made(std::move(out), newgroup);
}

int group_compare(group* a, group* b, int* result, const char*) {
    auto x = a->ranks, y = b->ranks;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = a->ranks == b->ranks ? MPI_IDENT : x == y ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

int group_free(MPI_Group* handle, const char* fn) {
    if (*handle != MPI_GROUP_EMPTY) {
        group* g = to_group(*handle);
        if (!g) return program_error(communicators::get().self(), MPI_ERR_GROUP, fn, "an invalid group");
        free_group(g);
    }
    *handle = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail::entry
