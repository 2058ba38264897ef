// The program's collectives under replication (see collectives.hpp). Each
// blocking collective and its nonblocking form share one function: with
// no request it runs the schedule to its end, with one it returns it as a
// request the program waits for.

#include "collectives.hpp"
#include "entry_points.hpp"
#include "set_collectives.hpp"

namespace rampart::replica::detail::entry {

namespace {

// Run by MPI inside each replica set (set_collectives.hpp) when it applies:
// blocking collectives on the world only.
bool in_set(const communicator* c, const MPI_Request* request) { return !request && set_collectives::get().covers(c); }

// The counts and displacements of every rank's part: the given ones, or
// `count` each, one after the other.
struct layout {
    std::vector<int> even_counts, even_displs;
    const int* counts;
    const int* displs;
    layout(int size, const parts_args& a) : counts(a.counts), displs(a.displs) {
        if (a.counts) return;
        even_counts.assign(static_cast<std::size_t>(size), a.count);
        even_displs.resize(static_cast<std::size_t>(size));
        for (int i = 0; i < size; ++i) even_displs[static_cast<std::size_t>(i)] = i * a.count;
        counts = even_counts.data();
        displs = even_displs.data();
    }
};

// Blocking (no request): runs the schedule; else hands it out as a request.
int run_or_hand_out(const schedule_ptr& s, MPI_Request* request) {
    if (!request) return run(s);
    *request = as_request(s);
    return MPI_SUCCESS;
}

}  // namespace

int barrier(communicator* c, MPI_Request* request, const char*) {
    if (in_set(c, request) && set_collectives::get().barrier()) return MPI_SUCCESS;
    return run_or_hand_out(detail::barrier(c), request);
}

int bcast(void* buf, int count, MPI_Datatype type, int root, communicator* c, MPI_Request* request, const char*) {
    return run_or_hand_out(detail::bcast(buf, count, type, root, c), request);
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, communicator* c,
           MPI_Request* request, const char*) {
    return run_or_hand_out(detail::reduce(sendbuf, recvbuf, count, type, op, root, c), request);
}

int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c,
              MPI_Request* request, const char*) {
    if (in_set(c, request) && set_collectives::get().allreduce(sendbuf, recvbuf, count, type, op)) return MPI_SUCCESS;
    return run_or_hand_out(detail::allreduce(sendbuf, recvbuf, count, type, op, c), request);
}

int gather(const part_args& own, const parts_args& all, int root, communicator* c, MPI_Request* request, const char*) {
    const layout l(c->size(), all);
    return run_or_hand_out(gatherv(own.buf, own.count, own.datatype, const_cast<void*>(all.buf), l.counts, l.displs,
                                   all.datatype, root, c),
                           request);
}

int scatter(const part_args& own, const parts_args& all, int root, communicator* c, MPI_Request* request, const char*) {
    const layout l(c->size(), all);
    return run_or_hand_out(scatterv(all.buf, l.counts, l.displs, all.datatype, const_cast<void*>(own.buf), own.count,
                                    own.datatype, root, c),
                           request);
}

int allgather(const part_args& own, const parts_args& all, communicator* c, MPI_Request* request, const char*) {
    const layout l(c->size(), all);
    auto* recvbuf = const_cast<void*>(all.buf);
    if (in_set(c, request) &&
        set_collectives::get().allgatherv(own.buf, own.count, own.datatype, recvbuf, l.counts, l.displs, all.datatype))
        return MPI_SUCCESS;
    return run_or_hand_out(allgatherv(own.buf, own.count, own.datatype, recvbuf, l.counts, l.displs, all.datatype, c),
                           request);
}

int alltoall(const parts_args& send, const parts_args& recv, communicator* c, MPI_Request* request, const char*) {
    const layout s(c->size(), send), r(c->size(), recv);
    return run_or_hand_out(alltoallv(send.buf, s.counts, s.displs, send.datatype, const_cast<void*>(recv.buf), r.counts,
                                     r.displs, recv.datatype, c),
                           request);
}

int reduce_scatter(const void* sendbuf, void* recvbuf, int recvcount, const int* recvcounts, MPI_Datatype type,
                   MPI_Op op, communicator* c, MPI_Request* request, const char*) {
    const layout l(c->size(), parts_args{recvbuf, recvcount, recvcounts, nullptr, type});
    return run_or_hand_out(detail::reduce_scatter(sendbuf, recvbuf, l.counts, type, op, c), request);
}

int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c, bool exclusive,
         MPI_Request* request, const char*) {
    return run_or_hand_out(detail::scan(sendbuf, recvbuf, count, type, op, c, exclusive), request);
}

}  // namespace rampart::replica::detail::entry
