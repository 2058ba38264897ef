#pragma once
// The program's requests. An MPI_Request handle the program holds is the
// address of one of these (never a request of the MPI library below): every
// call that takes a request is the replication layer's own.

#include "communicators.hpp"

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

namespace rampart::replica::detail {

struct send_op;
struct inbound;

struct request {
    virtual ~request() = default;
    /// Complete (the protocol's progress completes it; this only looks).
    virtual bool done() const = 0;
    /// For persistent requests: starts the next operation.
    virtual void start() {}
    /// The status of the finished operation.
    virtual MPI_Status final_status() const { return status; }
    MPI_Status status{};
    bool persistent = false;
    bool active = true;  // persistent: started and not yet completed by a wait or test
};

/// Part of its send_op (one allocation for both): the program's handle
/// keeps the operation alive.
struct send_request : request {
    send_op* op = nullptr;
    bool done() const override;
    MPI_Status final_status() const override;
};

struct recv_request : request {
    void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    int source = 0;  // rank in comm, or MPI_ANY_SOURCE
    int tag = 0;     // the program's tag, or MPI_ANY_TAG
    communicator* comm = nullptr;
    comm_use uses_comm;  // the program may free comm meanwhile
    int context = 0;
    bool complete = false;
    bool cancelled = false;
    std::shared_ptr<inbound> matched;
    bool done() const override { return complete; }
};

/// Holds memory that messages in flight read, until they are done.
struct keep_alive : request {
    explicit keep_alive(std::shared_ptr<void> what) : hold(std::move(what)) {}
    std::shared_ptr<void> hold;
    bool done() const override { return true; }
};

/// MPI_Isendrecv: complete when both are; its status is the receive's.
struct sendrecv_request : request {
    std::shared_ptr<request> send, recv;
    bool done() const override { return send->done() && recv->done(); }
    MPI_Status final_status() const override {
        MPI_Status st = recv->final_status();
        if (const int e = send->final_status().MPI_ERROR) st.MPI_ERROR = e;
        return st;
    }
};

/// A persistent request (Send_init, Recv_init): each start makes a new
/// operation with the same arguments.
struct persistent_request : request {
    std::function<std::shared_ptr<request>()> make;
    std::shared_ptr<request> current;
    bool done() const override { return !current || current->done(); }
    MPI_Status final_status() const override { return current ? current->final_status() : status; }
    void start() override {
        current = make();
        active = true;
    }
};

/// A nonblocking collective: a schedule of point-to-point steps, run by
/// `advance` each time the protocol looks at it.
struct collective_request : request {
    std::function<bool()> advance;  // true once the collective is complete
    mutable bool finished = false;
    bool done() const override {
        if (!finished) finished = advance();
        return finished;
    }
};

MPI_Request to_handle(std::shared_ptr<request> r);
/// The request behind a handle; throws for a handle this layer did not make.
std::shared_ptr<request> from_handle(MPI_Request h);
/// Forgets the handle (a completed or freed request).
void release_handle(MPI_Request h);

}  // namespace rampart::replica::detail
