// Cartesian topologies of the program's communicators (no reordering: the
// ranks keep their order, as MPI allows).

#include "api.hpp"
#include "entry_points.hpp"

#include <functional>
#include <numeric>

namespace rampart::replica::detail::entry {

namespace {

// Coordinates of a rank in row-major order.
std::vector<int> coords_of(const communicator& c, int rank) {
    std::vector<int> coords(c.dims.size());
    for (std::size_t d = c.dims.size(); d-- > 0;) {
        coords[d] = rank % c.dims[d];
        rank /= c.dims[d];
    }
    return coords;
}

// The rank at coordinates, wrapped where periodic; -1 outside.
int rank_at(const communicator& c, std::vector<int> coords) {
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

}  // namespace

int cart_create(communicator* c, int ndims, const int dims[], const int periods[], MPI_Comm* newcomm, const char* fn) {
    const int cells = std::accumulate(dims, dims + ndims, 1, std::multiplies<>());
    if (cells > c->size() || cells < 0)
        return program_error(
            c, MPI_ERR_DIMS, fn,
            "a grid of " + std::to_string(cells) + " in a communicator of " + std::to_string(c->size()));
    std::vector<int> ranks(c->ranks.begin(), c->ranks.begin() + cells);
    communicator* made = duplicate(*c);  // agrees on an id over the whole communicator
    if (c->my_rank >= cells) {
        communicators::get().free(made);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    made->ranks = std::move(ranks);
    made->dims.assign(dims, dims + ndims);
    made->periods.assign(periods, periods + ndims);
    *newcomm = communicators::get().handle(made);
    return MPI_SUCCESS;
}

// No reordering: a process keeps its rank when the grid holds it.
int cart_map(communicator* c, int ndims, const int dims[], int* newrank, const char* fn) {
    const int cells = std::accumulate(dims, dims + ndims, 1, std::multiplies<>());
    if (cells < 0 || cells > c->size())
        return program_error(
            c, MPI_ERR_DIMS, fn,
            "a grid of " + std::to_string(cells) + " in a communicator of " + std::to_string(c->size()));
    *newrank = c->my_rank < cells ? c->my_rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int cartdim_get(communicator* c, int* ndims, const char*) {
    *ndims = static_cast<int>(c->dims.size());
    return MPI_SUCCESS;
}

int cart_get(communicator* c, int maxdims, int dims[], int periods[], int coords[], const char*) {
    const std::vector<int> mine = coords_of(*c, c->my_rank);
    for (int d = 0; d < maxdims && d < static_cast<int>(c->dims.size()); ++d) {
        dims[d] = c->dims[static_cast<std::size_t>(d)];
        periods[d] = c->periods[static_cast<std::size_t>(d)];
        coords[d] = mine[static_cast<std::size_t>(d)];
    }
    return MPI_SUCCESS;
}

int cart_coords(communicator* c, int rank, int maxdims, int coords[], const char*) {
    const std::vector<int> at = coords_of(*c, rank);
    for (int d = 0; d < maxdims && d < static_cast<int>(at.size()); ++d) coords[d] = at[static_cast<std::size_t>(d)];
    return MPI_SUCCESS;
}

int cart_rank(communicator* c, const int coords[], int* rank, const char* fn) {
    *rank = rank_at(*c, std::vector<int>(coords, coords + c->dims.size()));
    if (*rank < 0) return program_error(c, MPI_ERR_ARG, fn, "coordinates outside the grid");
    return MPI_SUCCESS;
}

int cart_shift(communicator* c, int direction, int disp, int* source, int* dest, const char* fn) {
    if (direction < 0 || direction >= static_cast<int>(c->dims.size()))
        return program_error(c, MPI_ERR_ARG, fn, "direction " + std::to_string(direction));
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
int cart_sub(communicator* c, const int remain_dims[], MPI_Comm* newcomm, const char* fn) {
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
    if (int rc = comm_split(c, color, key, newcomm, fn)) return rc;
    communicator* made = communicators::get().find(*newcomm);
    made->dims = std::move(dims);
    made->periods = std::move(periods);
    return MPI_SUCCESS;
}

int topo_test(communicator* c, int* status, const char*) {
    *status = c->dims.empty() ? MPI_UNDEFINED : MPI_CART;
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail::entry
