// The program's collectives under replication (see collectives.hpp).

#include "api.hpp"
#include "collectives.hpp"
#include "set_collectives.hpp"

namespace rp = rampart::replica::detail;

namespace {

rp::communicator* comm_for(MPI_Comm c, const char* fn, int* rc) {
    rp::started(fn);
    return rp::find_comm(c, fn, rc);
}

// Run by MPI inside each replica set (set_collectives.hpp) when it applies.
bool in_set(const rp::communicator* c) { return rp::set_collectives::get().covers(c); }

int check_root(const rp::communicator* c, int root, const char* fn) {
    if (root >= 0 && root < c->size()) return MPI_SUCCESS;
    return rp::program_error(c, MPI_ERR_ROOT, fn, "root " + std::to_string(root) + " of " + std::to_string(c->size()));
}

// Equal counts at consecutive places, for the fixed-size forms.
struct even {
    std::vector<int> counts, displs;
    even(int size, int count) : counts(static_cast<std::size_t>(size), count), displs(static_cast<std::size_t>(size)) {
        for (int i = 0; i < size; ++i) displs[static_cast<std::size_t>(i)] = i * count;
    }
};

// A collective with a root: checks it, then runs the schedule make(c) returns.
template <class Make>
int rooted(MPI_Comm comm, int root, const char* fn, Make make) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = comm_for(comm, fn, &rc);
    if (!c) return rc;
    if ((rc = check_root(c, root, fn))) return rc;
    return rp::run(make(*c));
}

}  // namespace

#define RAMPART_COMM(fn)                           \
    int rc = MPI_SUCCESS;                          \
    rp::communicator* c = comm_for(comm, fn, &rc); \
    if (!c) return rc

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
    RAMPART_COMM("MPI_Barrier");
    if (in_set(c) && rp::set_collectives::get().barrier()) return MPI_SUCCESS;
    return rp::run(rp::barrier(c));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
    RAMPART_COMM("MPI_Ibarrier");
    *request = rp::as_request(rp::barrier(c));
    return MPI_SUCCESS;
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    RAMPART_COMM("MPI_Bcast");
    if ((rc = check_root(c, root, "MPI_Bcast")) || (rc = rp::check_buffer(c, count, type, "MPI_Bcast"))) return rc;
    return rp::run(rp::bcast(buf, count, type, root, c));
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
    RAMPART_COMM("MPI_Ibcast");
    if ((rc = check_root(c, root, "MPI_Ibcast")) || (rc = rp::check_buffer(c, count, type, "MPI_Ibcast"))) return rc;
    *request = rp::as_request(rp::bcast(buf, count, type, root, c));
    return MPI_SUCCESS;
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    RAMPART_COMM("MPI_Reduce");
    if ((rc = check_root(c, root, "MPI_Reduce")) || (rc = rp::check_buffer(c, count, type, "MPI_Reduce"))) return rc;
    return rp::run(rp::reduce(sendbuf, recvbuf, count, type, op, root, c));
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    RAMPART_COMM("MPI_Allreduce");
    if ((rc = rp::check_buffer(c, count, type, "MPI_Allreduce"))) return rc;
    if (in_set(c) && rp::set_collectives::get().allreduce(sendbuf, recvbuf, count, type, op)) return MPI_SUCCESS;
    return rp::run(rp::allreduce(sendbuf, recvbuf, count, type, op, c));
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
    RAMPART_COMM("MPI_Iallreduce");
    if ((rc = rp::check_buffer(c, count, type, "MPI_Iallreduce"))) return rc;
    *request = rp::as_request(rp::allreduce(sendbuf, recvbuf, count, type, op, c));
    return MPI_SUCCESS;
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return rooted(comm, root, "MPI_Gather", [&](rp::communicator& c) {
        const even e(c.size(), recvcount);
        return rp::gatherv(sendbuf, sendcount, sendtype, recvbuf, e.counts.data(), e.displs.data(), recvtype, root, &c);
    });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return rooted(comm, root, "MPI_Gatherv", [&](rp::communicator& c) {
        return rp::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, &c);
    });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return rooted(comm, root, "MPI_Scatter", [&](rp::communicator& c) {
        const even e(c.size(), sendcount);
        return rp::scatterv(sendbuf, e.counts.data(), e.displs.data(), sendtype, recvbuf, recvcount, recvtype, root,
                            &c);
    });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return rooted(comm, root, "MPI_Scatterv", [&](rp::communicator& c) {
        return rp::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, &c);
    });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    RAMPART_COMM("MPI_Allgather");
    const even e(c->size(), recvcount);
    if (in_set(c) && rp::set_collectives::get().allgatherv(sendbuf, sendcount, sendtype, recvbuf, e.counts.data(),
                                                           e.displs.data(), recvtype))
        return MPI_SUCCESS;
    return rp::run(
        rp::allgatherv(sendbuf, sendcount, sendtype, recvbuf, e.counts.data(), e.displs.data(), recvtype, c));
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    RAMPART_COMM("MPI_Allgatherv");
    if (in_set(c) &&
        rp::set_collectives::get().allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype))
        return MPI_SUCCESS;
    return rp::run(rp::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c));
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    RAMPART_COMM("MPI_Alltoall");
    const even s(c->size(), sendcount), r(c->size(), recvcount);
    return rp::run(rp::alltoallv(sendbuf, s.counts.data(), s.displs.data(), sendtype, recvbuf, r.counts.data(),
                                 r.displs.data(), recvtype, c));
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    RAMPART_COMM("MPI_Alltoallv");
    return rp::run(rp::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, c));
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
    RAMPART_COMM("MPI_Reduce_scatter");
    return rp::run(rp::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, c));
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    RAMPART_COMM("MPI_Reduce_scatter_block");
    const even e(c->size(), recvcount);
    return rp::run(rp::reduce_scatter(sendbuf, recvbuf, e.counts.data(), type, op, c));
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    RAMPART_COMM("MPI_Scan");
    return rp::run(rp::scan(sendbuf, recvbuf, count, type, op, c, false));
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    RAMPART_COMM("MPI_Exscan");
    return rp::run(rp::scan(sendbuf, recvbuf, count, type, op, c, true));
}

}  // extern "C"
