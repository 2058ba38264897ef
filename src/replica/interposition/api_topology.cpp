// Cartesian topologies of the program's communicators (no reordering: the
// ranks keep their order, as MPI allows).

#include "api.hpp"

#include <functional>
#include <numeric>

namespace rp = rampart::replica::detail;

namespace {

// Coordinates of a rank in row-major order.
std::vector<int> coords_of(const rp::communicator& c, int rank) {
    std::vector<int> coords(c.dims.size());
    for (std::size_t d = c.dims.size(); d-- > 0;) {
        coords[d] = rank % c.dims[d];
        rank /= c.dims[d];
    }
    return coords;
}

// The rank at coordinates, wrapped where periodic; -1 outside.
int rank_at(const rp::communicator& c, std::vector<int> coords) {
    int rank = 0;
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
        int x = coords[d];
        if (c.periods[d])
            x = ((x % c.dims[d]) + c.dims[d]) % c.dims[d];
        else if (x < 0 || x >= c.dims[d])
            return -1;
        rank = rank * c.dims[d] + x;
    }
    return rank;
}

rp::communicator* cart(MPI_Comm comm, const char* fn, int* rc) {
    rp::started(fn);
    rp::communicator* c = rp::find_comm(comm, fn, rc);
    if (c && c->dims.empty()) {
        *rc = rp::program_error(c, MPI_ERR_TOPOLOGY, fn, "a communicator without a Cartesian topology");
        return nullptr;
    }
    return c;
}

}  // namespace

extern "C" {

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int, MPI_Comm* newcomm) {
    rp::started("MPI_Cart_create");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Cart_create", &rc);
    if (!c) return rc;
    const int cells = std::accumulate(dims, dims + ndims, 1, std::multiplies<>());
    if (ndims < 0 || cells > c->size() || cells < 0)
        return rp::program_error(
            c, MPI_ERR_DIMS, "MPI_Cart_create",
            "a grid of " + std::to_string(cells) + " in a communicator of " + std::to_string(c->size()));
    std::vector<int> ranks(c->ranks.begin(), c->ranks.begin() + cells);
    rp::communicator* made = rp::duplicate(*c);  // agrees on an id over the whole communicator
    if (c->my_rank >= cells) {
        rp::communicators::get().free(made);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    made->ranks = std::move(ranks);
    made->dims.assign(dims, dims + ndims);
    made->periods.assign(periods, periods + ndims);
    *newcomm = rp::communicators::get().handle(made);
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cartdim_get", &rc);
    if (c) *ndims = static_cast<int>(c->dims.size());
    return rc;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cart_get", &rc);
    if (!c) return rc;
    const std::vector<int> mine = coords_of(*c, c->my_rank);
    for (int d = 0; d < maxdims && d < static_cast<int>(c->dims.size()); ++d) {
        dims[d] = c->dims[static_cast<std::size_t>(d)];
        periods[d] = c->periods[static_cast<std::size_t>(d)];
        coords[d] = mine[static_cast<std::size_t>(d)];
    }
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cart_coords", &rc);
    if (!c) return rc;
    if ((rc = rp::check_peer(c, rank, false, "MPI_Cart_coords"))) return rc;
    const std::vector<int> at = coords_of(*c, rank);
    for (int d = 0; d < maxdims && d < static_cast<int>(at.size()); ++d) coords[d] = at[static_cast<std::size_t>(d)];
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cart_rank", &rc);
    if (!c) return rc;
    *rank = rank_at(*c, std::vector<int>(coords, coords + c->dims.size()));
    if (*rank < 0) return rp::program_error(c, MPI_ERR_ARG, "MPI_Cart_rank", "coordinates outside the grid");
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* source, int* dest) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cart_shift", &rc);
    if (!c) return rc;
    if (direction < 0 || direction >= static_cast<int>(c->dims.size()))
        return rp::program_error(c, MPI_ERR_ARG, "MPI_Cart_shift", "direction " + std::to_string(direction));
    std::vector<int> at = coords_of(*c, c->my_rank);
    const auto d = static_cast<std::size_t>(direction);
    const int here = at[d];
    at[d] = here + disp;
    const int to = rank_at(*c, at);
    at[d] = here - disp;
    const int from = rank_at(*c, at);
    *dest = to < 0 ? MPI_PROC_NULL : to;
    *source = from < 0 ? MPI_PROC_NULL : from;
    return MPI_SUCCESS;
}

// The sub-grid of the remaining dimensions through this process: a split
// whose color is the position in the dropped dimensions, and whose key
// keeps the row-major order of the remaining ones.
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = cart(comm, "MPI_Cart_sub", &rc);
    if (!c) return rc;
    const std::vector<int> at = coords_of(*c, c->my_rank);
    int color = 0, key = 0;
    std::vector<int> dims, periods;
    for (std::size_t d = 0; d < c->dims.size(); ++d) {
        if (remain_dims[d]) {
            key = key * c->dims[d] + at[d];
            dims.push_back(c->dims[d]);
            periods.push_back(c->periods[d]);
        } else {
            color = color * c->dims[d] + at[d];
        }
    }
    if ((rc = MPI_Comm_split(comm, color, key, newcomm))) return rc;
    rp::communicator* made = rp::communicators::get().find(*newcomm);
    made->dims = std::move(dims);
    made->periods = std::move(periods);
    return MPI_SUCCESS;
}

// No reordering: a process keeps its rank when the grid holds it.
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int[], int* newrank) {
    rp::started("MPI_Cart_map");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Cart_map", &rc);
    if (!c) return rc;
    const int cells = std::accumulate(dims, dims + ndims, 1, std::multiplies<>());
    if (ndims < 0 || cells < 0 || cells > c->size())
        return rp::program_error(c, MPI_ERR_DIMS, "MPI_Cart_map",
                                 "a grid of " + std::to_string(cells) + " in a communicator of " + std::to_string(c->size()));
    *newrank = c->my_rank < cells ? c->my_rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
    rp::started("MPI_Topo_test");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Topo_test", &rc);
    if (c) *status = c->dims.empty() ? MPI_UNDEFINED : MPI_CART;
    return rc;
}

}  // extern "C"
