#pragma once
// Collectives built on the replicated point-to-point messages, so that a
// crash in the middle of one is survived like any other, and computed the
// same way on every replica (fixed trees, fixed order of combination), so
// that every replica gets bitwise the same result. Each is a schedule of
// rounds; a blocking call runs it to its end, a nonblocking one is a
// request that advances it.

#include "communicators.hpp"
#include "requests.hpp"

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

namespace rampart::replica::detail {

struct schedule {
    using round = std::function<void(std::vector<std::shared_ptr<request>>&)>;
    std::vector<round> rounds;  // each posts its messages; the next starts when they are done
    std::size_t next = 0;
    std::vector<std::shared_ptr<request>> current;
    comm_use uses_comm;  // its rounds post messages on it after the program may have freed it
    /// Runs rounds while their messages are done; true at the end.
    bool advance();
    /// Runs the rounds up to the first that posts messages (a nonblocking
    /// collective's call).
    void start();
    void then(const std::shared_ptr<schedule>& more);
};
using schedule_ptr = std::shared_ptr<schedule>;

/// Runs a schedule to its end (a blocking collective).
int run(const schedule_ptr& s);
/// A request the program waits for (a nonblocking collective).
MPI_Request as_request(const schedule_ptr& s);

schedule_ptr barrier(communicator* c);
schedule_ptr bcast(void* buf, int count, MPI_Datatype type, int root, communicator* c);
schedule_ptr reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                    communicator* c);
schedule_ptr allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c);
schedule_ptr gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                     const int* displs, MPI_Datatype recvtype, int root, communicator* c);
schedule_ptr scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, communicator* c);
schedule_ptr allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                        const int* displs, MPI_Datatype recvtype, communicator* c);
schedule_ptr alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                       void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                       communicator* c);
schedule_ptr reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type, MPI_Op op,
                            communicator* c);
schedule_ptr scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c,
                  bool exclusive);

}  // namespace rampart::replica::detail
