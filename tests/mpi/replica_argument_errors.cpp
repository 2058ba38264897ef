// A plain MPI program that makes calls with bad arguments on a
// communicator that returns errors, and folds the error class of each into
// its checksum: the same natively and under replication, since the layer
// checks the arguments as MPI does. A collective errs on every rank here (an
// error on some ranks only would leave the others waiting). Arguments that
// MPI ignores (MPI_IN_PLACE, away from the root) are not checked. A message
// exchanged after the errors shows that a failed call left nothing behind.
// usage: replica_argument_errors

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

std::uint64_t sum = 1469598103934665603ull;

void fold(long x) {
    for (int i = 0; i < 8; ++i) sum = (sum ^ static_cast<unsigned char>(x >> (8 * i))) * 1099511628211ull;
}

int rank_in_world = 0;

// The error class of a call's result, folded and shown by rank 0.
void expect_error(const char* what, int rc) {
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    fold(cls);
    if (rank_in_world == 0) std::printf("%-40s error class %d\n", what, cls);
}

void point_to_point(MPI_Comm comm, int size) {
    int x = 1;
    MPI_Request r = MPI_REQUEST_NULL;
    expect_error("MPI_Send count -1", MPI_Send(&x, -1, MPI_INT, 0, 0, comm));
    expect_error("MPI_Send to rank size", MPI_Send(&x, 1, MPI_INT, size, 0, comm));
    expect_error("MPI_Send tag -5", MPI_Send(&x, 1, MPI_INT, 0, -5, comm));
    expect_error("MPI_Send MPI_DATATYPE_NULL", MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, comm));
    expect_error("MPI_Isend MPI_ANY_SOURCE", MPI_Isend(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, &r));
    expect_error("MPI_Recv from rank size + 3", MPI_Recv(&x, 1, MPI_INT, size + 3, 0, comm, MPI_STATUS_IGNORE));
    expect_error("MPI_Irecv count -2", MPI_Irecv(&x, -2, MPI_INT, 0, 0, comm, &r));
    expect_error("MPI_Send_init tag -1", MPI_Send_init(&x, 1, MPI_INT, 0, -1, comm, &r));
    // The send half is valid, the receive half not: nothing may be sent.
    expect_error("MPI_Sendrecv from rank -7",
                 MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &x, 1, MPI_INT, -7, 3, comm, MPI_STATUS_IGNORE));
    expect_error("MPI_Probe tag -3", MPI_Probe(0, -3, comm, MPI_STATUS_IGNORE));
    MPI_Message m = MPI_MESSAGE_NULL;
    expect_error("MPI_Mprobe from rank size", MPI_Mprobe(size, 0, comm, &m, MPI_STATUS_IGNORE));
}

void collectives(MPI_Comm comm, int size) {
    const auto n = static_cast<std::size_t>(size);
    std::vector<int> a(4 * n, 1), b(4 * n), counts(n, 1), displs(n);
    for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<int>(i);
    counts[n - 1] = -1;
    expect_error("MPI_Bcast root -2", MPI_Bcast(a.data(), 1, MPI_INT, -2, comm));
    expect_error("MPI_Reduce root size", MPI_Reduce(a.data(), b.data(), 1, MPI_INT, MPI_SUM, size, comm));
    expect_error("MPI_Allreduce count -1", MPI_Allreduce(a.data(), b.data(), -1, MPI_INT, MPI_SUM, comm));
    expect_error("MPI_Bcast MPI_DATATYPE_NULL", MPI_Bcast(a.data(), 1, MPI_DATATYPE_NULL, 0, comm));
    expect_error("MPI_Scatter recvcount -4", MPI_Scatter(a.data(), 1, MPI_INT, b.data(), -4, MPI_INT, 0, comm));
    expect_error("MPI_Allgather sendcount -1", MPI_Allgather(a.data(), -1, MPI_INT, b.data(), 1, MPI_INT, comm));
    expect_error("MPI_Gather sendcount -1", MPI_Gather(a.data(), -1, MPI_INT, b.data(), 1, MPI_INT, 0, comm));
    expect_error("MPI_Allgatherv sendcount -2",
                 MPI_Allgatherv(a.data(), -2, MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT, comm));
    expect_error("MPI_Alltoallv a count -1", MPI_Alltoallv(a.data(), counts.data(), displs.data(), MPI_INT, b.data(),
                                                           counts.data(), displs.data(), MPI_INT, comm));
    expect_error("MPI_Reduce_scatter a count -1",
                 MPI_Reduce_scatter(a.data(), b.data(), counts.data(), MPI_INT, MPI_SUM, comm));
    expect_error("MPI_Scan count -3", MPI_Scan(a.data(), b.data(), -3, MPI_INT, MPI_SUM, comm));
    MPI_Request r = MPI_REQUEST_NULL;
    expect_error("MPI_Ibcast root size", MPI_Ibcast(a.data(), 1, MPI_INT, size, comm, &r));
}

// Communicators, groups, topologies and attributes (where Open MPI checks
// less than the layer, as for a rank beyond a grid, the calls are left out).
void communicators(MPI_Comm comm, int size) {
    int source = 0, dest = 0, dims[1] = {size}, periods[1] = {0}, value = 0, flag = 0;
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Group world = MPI_GROUP_NULL, picked = MPI_GROUP_NULL;
    expect_error("MPI_Cart_shift without a topology", MPI_Cart_shift(comm, 0, 1, &source, &dest));
    expect_error("MPI_Cart_create ndims -1", MPI_Cart_create(comm, -1, dims, periods, 0, &cart));
    MPI_Comm_group(comm, &world);
    const int beyond[1] = {size};
    expect_error("MPI_Group_incl of rank size", MPI_Group_incl(world, 1, beyond, &picked));
    expect_error("MPI_Comm_get_attr of an invalid key", MPI_Comm_get_attr(comm, MPI_KEYVAL_INVALID, &value, &flag));
    MPI_Errhandler none = MPI_ERRHANDLER_NULL;
    expect_error("MPI_Errhandler_free of MPI_ERRHANDLER_NULL", MPI_Errhandler_free(&none));
    MPI_Cart_create(comm, 1, dims, periods, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    int coords[1] = {0};
    expect_error("MPI_Cart_coords of MPI_PROC_NULL", MPI_Cart_coords(cart, MPI_PROC_NULL, 1, coords));
    MPI_Comm_free(&cart);
    MPI_Group_free(&world);
}

// Arguments MPI ignores: success, whatever they hold.
void ignored_arguments(MPI_Comm comm, int rank, int size) {
    const auto n = static_cast<std::size_t>(size);
    std::vector<int> a(n, rank), b(n, 0), ones(n, 1), displs(n);
    for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<int>(i);
    const bool root = rank == 0;
    expect_error("MPI_Allgather in place, sendcount -1",
                 MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, a.data(), 1, MPI_INT, comm));
    expect_error(
        "MPI_Gather, recvcount -1 away from the root",
        MPI_Gather(a.data(), 1, MPI_INT, b.data(), root ? 1 : -1, root ? MPI_INT : MPI_DATATYPE_NULL, 0, comm));
    expect_error("MPI_Gatherv, no counts away from the root",
                 MPI_Gatherv(a.data(), 1, MPI_INT, b.data(), root ? ones.data() : nullptr,
                             root ? displs.data() : nullptr, MPI_INT, 0, comm));
    expect_error("MPI_Scatterv, no counts away from the root",
                 MPI_Scatterv(a.data(), root ? ones.data() : nullptr, root ? displs.data() : nullptr, MPI_INT, b.data(),
                              1, MPI_INT, 0, comm));
    expect_error("MPI_Scatter in place at the root, recvcount -1",
                 MPI_Scatter(a.data(), 1, MPI_INT, root ? MPI_IN_PLACE : b.data(), root ? -1 : 1, MPI_INT, 0, comm));
    fold(a[0]), fold(b[0]);
}

// Calls without a communicator: the layer raises their errors on
// MPI_COMM_SELF, as MPI 4.0 says, and Open MPI on MPI_COMM_WORLD; both return.
void requests(MPI_Comm comm) {
    int x = 0, flag = 0, index = 0;
    MPI_Request null = MPI_REQUEST_NULL;
    expect_error("MPI_Isend to a null request", MPI_Isend(&x, 1, MPI_INT, 0, 0, comm, nullptr));
    expect_error("MPI_Wait of a null pointer", MPI_Wait(nullptr, MPI_STATUS_IGNORE));
    expect_error("MPI_Test of a null pointer", MPI_Test(nullptr, &flag, MPI_STATUS_IGNORE));
    expect_error("MPI_Waitall count -1", MPI_Waitall(-1, &null, MPI_STATUSES_IGNORE));
    expect_error("MPI_Waitall of no array", MPI_Waitall(2, nullptr, MPI_STATUSES_IGNORE));
    expect_error("MPI_Testany of no array", MPI_Testany(2, nullptr, &index, &flag, MPI_STATUS_IGNORE));
    expect_error("MPI_Request_free of MPI_REQUEST_NULL", MPI_Request_free(&null));
    expect_error("MPI_Start of MPI_REQUEST_NULL", MPI_Start(&null));
}

// MPI_PROC_NULL: found at once, with an empty status.
void no_process(MPI_Comm comm) {
    MPI_Status st;
    int flag = 0, count = -1;
    MPI_Iprobe(MPI_PROC_NULL, 0, comm, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    fold(flag), fold(st.MPI_SOURCE), fold(st.MPI_TAG), fold(count);
    MPI_Probe(MPI_PROC_NULL, 0, comm, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    fold(st.MPI_SOURCE), fold(st.MPI_TAG), fold(count);
    if (rank_in_world == 0)
        std::printf("MPI_Iprobe of MPI_PROC_NULL: flag %d, source %d, count %d\n", flag, st.MPI_SOURCE, count);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_in_world);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    point_to_point(comm, size);
    collectives(comm, size);
    requests(comm);
    communicators(comm, size);
    ignored_arguments(comm, rank_in_world, size);
    no_process(comm);
    // Nothing left over from the failed calls: the next message is this one.
    int got = -1, mine = 100 + rank_in_world;
    MPI_Status st;
    MPI_Sendrecv(&mine, 1, MPI_INT, (rank_in_world + 1) % size, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm,
                 &st);
    fold(got), fold(st.MPI_SOURCE), fold(st.MPI_TAG);
    std::uint64_t all = 0;
    MPI_Allreduce(&sum, &all, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    if (rank_in_world == 0) std::printf("checksum %016llx\n", static_cast<unsigned long long>(all));
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
