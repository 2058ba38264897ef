#pragma once
// What the protocol asks of MPI about the job's other processes: its
// messages on MPI_COMM_WORLD and the deaths MPI knows of. In the library it
// is MPI itself (mpi_world()); a unit test gives the protocol one that it
// scripts, to play the other processes' messages and deaths in any order.
// The calls mean what the PMPI calls of the same names mean, on
// MPI_COMM_WORLD; requests and messages are only ever handed back to the
// transport that made them.

#include <mpi.h>

#include <vector>

namespace rampart::replica::detail {

class transport {
public:
    virtual ~transport() = default;

    /// MPI_Isend, or MPI_Issend when `synchronous`.
    virtual int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, bool synchronous,
                      MPI_Request* request) = 0;
    virtual int iprobe(int source, int tag, int* flag, MPI_Status* status) = 0;
    virtual int improbe(int source, int tag, int* flag, MPI_Message* message, MPI_Status* status) = 0;
    virtual int mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message) = 0;
    virtual int imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) = 0;
    virtual int test(MPI_Request* request, int* flag) = 0;
    virtual int wait(MPI_Request* request) = 0;
    /// MPI_Get_count of a status that improbe or iprobe filled.
    virtual int count(const MPI_Status& status, MPI_Datatype type) = 0;
    /// The processes MPI knows to have failed, acknowledged (so that
    /// receives from any source work again).
    virtual std::vector<int> failed() = 0;

    // The replica sets' communicators (replica k of every rank), on which
    // MPI gathers the blocks of world collectives (set_collectives.hpp).
    /// MPI_Comm_split by replica, then agreed on by every process: whether
    /// every process has its set's communicator.
    virtual bool split_sets(int replica, int rank) = 0;
    /// MPI_Iallgatherv of bytes on this process's set; the request is tested here.
    virtual int set_iallgatherv(const void* send, int count, void* out, const int* counts, const int* displs,
                                MPI_Request* request) = 0;
    /// MPIX_Comm_revoke of this process's set: its members waiting in MPI return.
    virtual void revoke_set() = 0;

    /// MPI_Testall, by test.
    int test_all(int n, MPI_Request* requests, int* flag) {
        *flag = 1;
        for (int i = 0; i < n; ++i) {
            if (requests[i] == MPI_REQUEST_NULL) continue;
            int done = 0;
            if (const int rc = test(&requests[i], &done); rc != MPI_SUCCESS) return rc;
            if (!done) *flag = 0;
        }
        return MPI_SUCCESS;
    }
};

/// MPI's own, on MPI_COMM_WORLD.
transport& mpi_world();

}  // namespace rampart::replica::detail
