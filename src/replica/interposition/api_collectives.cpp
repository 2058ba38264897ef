// The program's collectives under replication (see collectives.hpp). Each
// blocking collective and its nonblocking form share one function: with
// no request it runs the schedule to its end, with one it returns it as a
// request the program waits for.

#include "api.hpp"
#include "collectives.hpp"
#include "set_collectives.hpp"

namespace rp = rampart::replica::detail;

namespace {

// Run by MPI inside each replica set (set_collectives.hpp) when it applies:
// blocking collectives on the world only.
bool in_set(const rp::communicator* c, const MPI_Request* request) {
    return !request && rp::set_collectives::get().covers(c);
}

int check_root(const rp::communicator* c, int root, const char* fn) {
    if (root >= 0 && root < c->size()) return MPI_SUCCESS;
    return rp::program_error(c, MPI_ERR_ROOT, fn, "root " + std::to_string(root) + " of " + std::to_string(c->size()));
}

// Every count of a vector form is checked, as a single count is.
int check_counts(const rp::communicator* c, const int* counts, MPI_Datatype type, const char* fn) {
    if (!counts) return rp::program_error(c, MPI_ERR_COUNT, fn, "no array of counts");
    for (int i = 0; i < c->size(); ++i)
        if (int rc = rp::check_buffer(c, counts[i], type, fn)) return rc;
    return MPI_SUCCESS;
}

// Equal counts at consecutive places, for the fixed-size forms.
struct even {
    std::vector<int> counts, displs;
    even(int size, int count) : counts(static_cast<std::size_t>(size), count), displs(static_cast<std::size_t>(size)) {
        for (int i = 0; i < size; ++i) displs[static_cast<std::size_t>(i)] = i * count;
    }
};

// Blocking (no request): runs the schedule; else hands it out as a request.
int start(const rp::schedule_ptr& s, MPI_Request* request) {
    if (!request) return rp::run(s);
    *request = rp::as_request(s);
    return MPI_SUCCESS;
}

// The communicator of a collective, after MPI_Init; nullptr after the error.
rp::communicator* comm_for(MPI_Comm c, const char* fn, int* rc) {
    rp::started(fn);
    return rp::find_comm(c, fn, rc);
}

}  // namespace

#define RAMPART_COMM(fn)                           \
    int rc = MPI_SUCCESS;                          \
    rp::communicator* c = comm_for(comm, fn, &rc); \
    if (!c) return rc

#define RAMPART_CHECK(call) \
    if ((rc = (call))) return rc

namespace {

int barrier(MPI_Comm comm, MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    if (in_set(c, request) && rp::set_collectives::get().barrier()) return MPI_SUCCESS;
    return start(rp::barrier(c), request);
}

int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    RAMPART_CHECK(check_root(c, root, fn));
    RAMPART_CHECK(rp::check_buffer(c, count, type, fn));
    return start(rp::bcast(buf, count, type, root, c), request);
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
           MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    RAMPART_CHECK(check_root(c, root, fn));
    RAMPART_CHECK(rp::check_buffer(c, count, type, fn));
    return start(rp::reduce(sendbuf, recvbuf, count, type, op, root, c), request);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    RAMPART_CHECK(rp::check_buffer(c, count, type, fn));
    if (in_set(c, request) && rp::set_collectives::get().allreduce(sendbuf, recvbuf, count, type, op))
        return MPI_SUCCESS;
    return start(rp::allreduce(sendbuf, recvbuf, count, type, op, c), request);
}

// Gather (gathering) or scatter: `own` is each rank's buffer, `whole` the
// root's; counts == nullptr means `count` for every rank.
struct rooted_args {
    const void* own;
    int own_count;
    MPI_Datatype own_type;
    const void* whole;
    int count;
    const int* counts;
    const int* displs;
    MPI_Datatype whole_type;
};

int rooted(bool gathering, const rooted_args& a, int root, MPI_Comm comm, MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    RAMPART_CHECK(check_root(c, root, fn));
    const bool at_root = c->my_rank == root;
    if (!at_root || a.own != MPI_IN_PLACE) RAMPART_CHECK(rp::check_buffer(c, a.own_count, a.own_type, fn));
    const even e(c->size(), a.count);
    const int* counts = a.counts ? a.counts : e.counts.data();
    const int* displs = a.counts ? a.displs : e.displs.data();
    if (at_root) RAMPART_CHECK(check_counts(c, counts, a.whole_type, fn));
    if (at_root && !displs) return rp::program_error(c, MPI_ERR_ARG, fn, "no array of displacements");
    auto* whole = const_cast<void*>(a.whole);
    return start(gathering ? rp::gatherv(a.own, a.own_count, a.own_type, whole, counts, displs, a.whole_type, root, c)
                           : rp::scatterv(a.whole, counts, displs, a.whole_type, const_cast<void*>(a.own), a.own_count,
                                          a.own_type, root, c),
                 request);
}

int allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
              const char* fn) {
    RAMPART_COMM(fn);
    if (sendbuf != MPI_IN_PLACE) RAMPART_CHECK(rp::check_buffer(c, sendcount, sendtype, fn));
    const even e(c->size(), recvcount);
    const int* counts = recvcounts ? recvcounts : e.counts.data();
    const int* where = recvcounts ? displs : e.displs.data();
    RAMPART_CHECK(check_counts(c, counts, recvtype, fn));
    if (!where) return rp::program_error(c, MPI_ERR_ARG, fn, "no array of displacements");
    if (in_set(c, request) &&
        rp::set_collectives::get().allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, where, recvtype))
        return MPI_SUCCESS;
    return start(rp::allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, where, recvtype, c), request);
}

struct alltoall_args {
    const void* sendbuf;
    int sendcount;
    const int* sendcounts;
    const int* sdispls;
    MPI_Datatype sendtype;
    void* recvbuf;
    int recvcount;
    const int* recvcounts;
    const int* rdispls;
    MPI_Datatype recvtype;
};

int alltoall(const alltoall_args& a, MPI_Comm comm, MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    const bool vector = a.recvcounts != nullptr || a.sendcounts != nullptr;
    const even s(c->size(), a.sendcount), r(c->size(), a.recvcount);
    const int* sc = vector ? a.sendcounts : s.counts.data();
    const int* sd = vector ? a.sdispls : s.displs.data();
    const int* rc_ = vector ? a.recvcounts : r.counts.data();
    const int* rd = vector ? a.rdispls : r.displs.data();
    if (a.sendbuf != MPI_IN_PLACE) RAMPART_CHECK(check_counts(c, sc, a.sendtype, fn));
    RAMPART_CHECK(check_counts(c, rc_, a.recvtype, fn));
    if (!rd || (a.sendbuf != MPI_IN_PLACE && !sd))
        return rp::program_error(c, MPI_ERR_ARG, fn, "no array of displacements");
    return start(rp::alltoallv(a.sendbuf, sc, sd, a.sendtype, a.recvbuf, rc_, rd, a.recvtype, c), request);
}

int reduce_scatter(const void* sendbuf, void* recvbuf, int recvcount, const int* recvcounts, MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm, MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    const even e(c->size(), recvcount);
    const int* counts = recvcounts ? recvcounts : e.counts.data();
    RAMPART_CHECK(check_counts(c, counts, type, fn));
    return start(rp::reduce_scatter(sendbuf, recvbuf, counts, type, op, c), request);
}

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, bool exclusive,
         MPI_Request* request, const char* fn) {
    RAMPART_COMM(fn);
    RAMPART_CHECK(rp::check_buffer(c, count, type, fn));
    return start(rp::scan(sendbuf, recvbuf, count, type, op, c, exclusive), request);
}

}  // namespace

extern "C" {

int MPI_Barrier(MPI_Comm comm) { return barrier(comm, nullptr, "MPI_Barrier"); }
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { return barrier(comm, request, "MPI_Ibarrier"); }

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    return bcast(buf, count, type, root, comm, nullptr, "MPI_Bcast");
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
    return bcast(buf, count, type, root, comm, request, "MPI_Ibcast");
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    return reduce(sendbuf, recvbuf, count, type, op, root, comm, nullptr, "MPI_Reduce");
}
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
    return reduce(sendbuf, recvbuf, count, type, op, root, comm, request, "MPI_Ireduce");
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return allreduce(sendbuf, recvbuf, count, type, op, comm, nullptr, "MPI_Allreduce");
}
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
    return allreduce(sendbuf, recvbuf, count, type, op, comm, request, "MPI_Iallreduce");
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const rooted_args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype};
    return rooted(true, a, root, comm, nullptr, "MPI_Gather");
}
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    const rooted_args a{sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype};
    return rooted(true, a, root, comm, request, "MPI_Igather");
}
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const rooted_args a{sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype};
    return rooted(true, a, root, comm, nullptr, "MPI_Gatherv");
}
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    const rooted_args a{sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype};
    return rooted(true, a, root, comm, request, "MPI_Igatherv");
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const rooted_args a{recvbuf, recvcount, recvtype, sendbuf, sendcount, nullptr, nullptr, sendtype};
    return rooted(false, a, root, comm, nullptr, "MPI_Scatter");
}
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    const rooted_args a{recvbuf, recvcount, recvtype, sendbuf, sendcount, nullptr, nullptr, sendtype};
    return rooted(false, a, root, comm, request, "MPI_Iscatter");
}
int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const rooted_args a{recvbuf, recvcount, recvtype, sendbuf, 0, sendcounts, displs, sendtype};
    return rooted(false, a, root, comm, nullptr, "MPI_Scatterv");
}
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    const rooted_args a{recvbuf, recvcount, recvtype, sendbuf, 0, sendcounts, displs, sendtype};
    return rooted(false, a, root, comm, request, "MPI_Iscatterv");
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm, nullptr,
                     "MPI_Allgather");
}
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm, request,
                     "MPI_Iallgather");
}
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, nullptr,
                     "MPI_Allgatherv");
}
int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return allgather(sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm, request,
                     "MPI_Iallgatherv");
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    const alltoall_args a{sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype};
    return alltoall(a, comm, nullptr, "MPI_Alltoall");
}
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    const alltoall_args a{sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype};
    return alltoall(a, comm, request, "MPI_Ialltoall");
}
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    const alltoall_args a{sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts, rdispls, recvtype};
    return alltoall(a, comm, nullptr, "MPI_Alltoallv");
}
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
    const alltoall_args a{sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts, rdispls, recvtype};
    return alltoall(a, comm, request, "MPI_Ialltoallv");
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, type, op, comm, nullptr, "MPI_Reduce_scatter");
}
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
    return reduce_scatter(sendbuf, recvbuf, 0, recvcounts, type, op, comm, request, "MPI_Ireduce_scatter");
}
int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    return reduce_scatter(sendbuf, recvbuf, recvcount, nullptr, type, op, comm, nullptr, "MPI_Reduce_scatter_block");
}
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
    return reduce_scatter(sendbuf, recvbuf, recvcount, nullptr, type, op, comm, request, "MPI_Ireduce_scatter_block");
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, type, op, comm, false, nullptr, "MPI_Scan");
}
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
    return scan(sendbuf, recvbuf, count, type, op, comm, false, request, "MPI_Iscan");
}
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, type, op, comm, true, nullptr, "MPI_Exscan");
}
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
    return scan(sendbuf, recvbuf, count, type, op, comm, true, request, "MPI_Iexscan");
}

}  // extern "C"
