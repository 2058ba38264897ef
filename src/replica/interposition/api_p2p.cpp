// The program's point-to-point calls under replication.

#include "api.hpp"
#include "datatypes.hpp"

namespace rp = rampart::replica::detail;

namespace {

// The arguments of a point-to-point call: MPI_SUCCESS and the
// communicator, or the error. `receiving`: any source and tag allowed.
int check_call(int count, MPI_Datatype type, int peer, int tag, MPI_Comm c, bool receiving, const char* fn,
               rp::communicator** out) {
    rp::started(fn);
    int rc = MPI_SUCCESS;
    rp::communicator* comm = rp::find_comm(c, fn, &rc);
    if (!comm) return rc;
    if ((rc = rp::check_peer(comm, peer, receiving, fn)) || (rc = rp::check_tag(comm, tag, receiving, fn)) ||
        (rc = rp::check_buffer(comm, count, type, fn)))
        return rc;
    *out = comm;
    return MPI_SUCCESS;
}

int start_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm c, bool sync, const char* fn,
               std::shared_ptr<rp::request>* out) {
    rp::communicator* comm = nullptr;
    if (int rc = check_call(count, type, dest, tag, c, false, fn, &comm)) return rc;
    *out = rp::protocol::get().isend(buf, count, type, dest, tag, comm, comm->p2p(), sync);
    return MPI_SUCCESS;
}

int start_recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c, const char* fn,
               std::shared_ptr<rp::request>* out) {
    rp::communicator* comm = nullptr;
    if (int rc = check_call(count, type, source, tag, c, true, fn, &comm)) return rc;
    *out = rp::protocol::get().irecv(buf, count, type, source, tag, comm, comm->p2p());
    return MPI_SUCCESS;
}

int wait_for(const std::shared_ptr<rp::request>& r, MPI_Status* status) {
    rp::protocol::get().wait_until([&] { return r->done(); });
    const MPI_Status st = r->final_status();
    if (status != MPI_STATUS_IGNORE) *status = st;
    return st.MPI_ERROR;
}

int blocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm c, bool sync,
                  const char* fn) {
    std::shared_ptr<rp::request> r;
    if (int rc = start_send(buf, count, type, dest, tag, c, sync, fn, &r)) return rc;
    return wait_for(r, MPI_STATUS_IGNORE);
}

int nonblocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm c, bool sync,
                     const char* fn, MPI_Request* request) {
    std::shared_ptr<rp::request> r;
    if (int rc = start_send(buf, count, type, dest, tag, c, sync, fn, &r)) return rc;
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

std::shared_ptr<rp::request> buffered_send(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                           rp::communicator* c) {
    auto copy = std::make_shared<rp::typed_buffer>(buf, count, type);
    auto sent = rp::protocol::get().isend(copy->base, count, type, dest, tag, c, c->p2p(), false);
    sent->op->owner = std::move(copy);
    return std::make_shared<rp::keep_alive>(nullptr);
}

enum class send_mode { standard, synchronous, buffered };

int persistent_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, send_mode mode,
                    const char* fn, MPI_Request* request) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(count, type, dest, tag, comm, false, fn, &c)) return rc;
    auto r = std::make_shared<rp::persistent_request>();
    r->persistent = true;
    r->active = false;
    // The program may free the communicator before it starts the request again.
    r->make = [=, use = std::make_shared<rp::comm_use>(c)]() -> std::shared_ptr<rp::request> {
        if (mode == send_mode::buffered) return buffered_send(buf, count, type, dest, tag, c);
        return rp::protocol::get().isend(buf, count, type, dest, tag, c, c->p2p(), mode == send_mode::synchronous);
    };
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return blocking_send(buf, count, type, dest, tag, comm, false, "MPI_Send");
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return blocking_send(buf, count, type, dest, tag, comm, false, "MPI_Rsend");
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    return blocking_send(buf, count, type, dest, tag, comm, true, "MPI_Ssend");
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    return nonblocking_send(buf, count, type, dest, tag, comm, false, "MPI_Isend", r);
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    return nonblocking_send(buf, count, type, dest, tag, comm, false, "MPI_Irsend", r);
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    return nonblocking_send(buf, count, type, dest, tag, comm, true, "MPI_Issend", r);
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
    std::shared_ptr<rp::request> r;
    if (int rc = start_recv(buf, count, type, source, tag, comm, "MPI_Recv", &r)) return rc;
    return wait_for(r, status);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
    std::shared_ptr<rp::request> r;
    if (int rc = start_recv(buf, count, type, source, tag, comm, "MPI_Irecv", &r)) return rc;
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
    // Both halves are checked before either starts: an error leaves nothing posted.
    rp::communicator* c = nullptr;
    if (int rc = check_call(sendcount, sendtype, dest, sendtag, comm, false, "MPI_Isendrecv", &c)) return rc;
    auto r = std::make_shared<rp::sendrecv_request>();
    if (int rc = start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, "MPI_Isendrecv", &r->recv)) return rc;
    r->send = rp::protocol::get().isend(sendbuf, sendcount, sendtype, dest, sendtag, c, c->p2p(), false);
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = MPI_Isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                               recvtag, comm, &r))
        return rc;
    return MPI_Wait(&r, status);
}

// The outgoing data leave from a copy, so the receive may land in buf.
int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request* request) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(count, type, dest, sendtag, comm, false, "MPI_Isendrecv_replace", &c)) return rc;
    auto copy = std::make_shared<rp::typed_buffer>(buf, count, type);  // before a receive may land in buf
    auto r = std::make_shared<rp::sendrecv_request>();
    if (int rc = start_recv(buf, count, type, source, recvtag, comm, "MPI_Isendrecv_replace", &r->recv)) return rc;
    auto sent = rp::protocol::get().isend(copy->base, count, type, dest, sendtag, c, c->p2p(), false);
    sent->op->owner = std::move(copy);  // the message may still leave from it after the request is freed
    r->send = std::move(sent);
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = MPI_Isendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, &r)) return rc;
    return MPI_Wait(&r, status);
}

// Buffered sends complete at once: the message leaves from a copy of the
// data (in the program's datatype, so that only its values are compared).
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(count, type, dest, tag, comm, false, "MPI_Ibsend", &c)) return rc;
    *request = rp::to_handle(buffered_send(buf, count, type, dest, tag, c));
    return MPI_SUCCESS;
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = MPI_Ibsend(buf, count, type, dest, tag, comm, &r)) return rc;
    return MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
    return persistent_send(buf, count, type, dest, tag, comm, send_mode::standard, "MPI_Send_init", request);
}

int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
    return persistent_send(buf, count, type, dest, tag, comm, send_mode::synchronous, "MPI_Ssend_init", request);
}

int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
    return persistent_send(buf, count, type, dest, tag, comm, send_mode::standard, "MPI_Rsend_init", request);
}

int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
    return persistent_send(buf, count, type, dest, tag, comm, send_mode::buffered, "MPI_Bsend_init", request);
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(count, type, source, tag, comm, true, "MPI_Recv_init", &c)) return rc;
    rp::protocol& p = rp::protocol::get();
    auto r = std::make_shared<rp::persistent_request>();
    r->persistent = true;
    r->active = false;
    r->make = [=, &p, use = std::make_shared<rp::comm_use>(c)]() -> std::shared_ptr<rp::request> {
        return p.irecv(buf, count, type, source, tag, c, c->p2p());
    };
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(0, MPI_BYTE, source, tag, comm, true, "MPI_Probe", &c)) return rc;
    rp::protocol& p = rp::protocol::get();
    if (source == MPI_PROC_NULL) return MPI_SUCCESS;
    if (p.replaying() && !p.probe(source, tag, c, c->p2p(), status))
        p.abort_job(3, "the re-created replica of rank " + std::to_string(p.rank()) +
                           " probes in its set-up for a message its survivor never received there");
    p.wait_until([&] { return p.probe(source, tag, c, c->p2p(), status) != nullptr; });
    return MPI_SUCCESS;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    rp::communicator* c = nullptr;
    if (int rc = check_call(0, MPI_BYTE, source, tag, comm, true, "MPI_Iprobe", &c)) return rc;
    rp::protocol& p = rp::protocol::get();
    p.progress_pending();
    *flag = source != MPI_PROC_NULL && p.probe(source, tag, c, c->p2p(), status) != nullptr;
    return MPI_SUCCESS;
}

}  // extern "C"
