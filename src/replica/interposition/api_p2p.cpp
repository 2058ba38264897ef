// The program's point-to-point calls under replication.

#include "api.hpp"
#include "datatypes.hpp"
#include "entry_points.hpp"

namespace rampart::replica::detail::entry {

namespace {

std::shared_ptr<request> start_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c,
                                    bool sync) {
    return protocol::get().isend(buf, count, type, dest, tag, c, c->p2p(), sync);
}

std::shared_ptr<request> start_recv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c) {
    return protocol::get().irecv(buf, count, type, source, tag, c, c->p2p());
}

// Buffered sends complete at once: the message leaves from a copy of the
// data (in the program's datatype, so that only its values are compared).
std::shared_ptr<request> start_buffered(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                                        communicator* c) {
    auto copy = std::make_shared<typed_buffer>(buf, count, type);
    auto sent = protocol::get().isend(copy->base, count, type, dest, tag, c, c->p2p(), false);
    sent->op->owner = std::move(copy);
    return std::make_shared<keep_alive>(nullptr);
}

// A persistent request on `c` whose every start makes the next operation.
// The program may free the communicator before it starts the request again.
int persistent(communicator* c, std::function<std::shared_ptr<request>()> make, MPI_Request* handle) {
    auto r = std::make_shared<persistent_request>();
    r->persistent = true;
    r->active = false;
    r->make = [make = std::move(make), use = std::make_shared<comm_use>(c)] { return make(); };
    *handle = to_handle(std::move(r));
    return MPI_SUCCESS;
}

}  // namespace

int blocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c, bool sync,
                  const char*) {
    return wait_for(start_send(buf, count, type, dest, tag, c, sync), MPI_STATUS_IGNORE);
}

int nonblocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c, bool sync,
                     MPI_Request* request, const char*) {
    *request = to_handle(start_send(buf, count, type, dest, tag, c, sync));
    return MPI_SUCCESS;
}

int buffered_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c,
                  MPI_Request* request, const char*) {
    return wait_or_hand_out(start_buffered(buf, count, type, dest, tag, c), MPI_STATUS_IGNORE, request);
}

int recv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Status* status,
         const char*) {
    return wait_for(start_recv(buf, count, type, source, tag, c), status);
}

int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Request* request,
          const char*) {
    *request = to_handle(start_recv(buf, count, type, source, tag, c));
    return MPI_SUCCESS;
}

int sendrecv(const send_args& send, const recv_args& recv, communicator* c, MPI_Status* status, MPI_Request* request,
             const char*) {
    auto r = std::make_shared<sendrecv_request>();
    r->recv = start_recv(recv.buf, recv.count, recv.datatype, recv.source, recv.tag, c);
    r->send = start_send(send.buf, send.count, send.datatype, send.dest, send.tag, c, false);
    return wait_or_hand_out(std::move(r), status, request);
}

// The outgoing data leave from a copy, so the receive may land in buf.
int sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                     communicator* c, MPI_Status* status, MPI_Request* request, const char*) {
    auto copy = std::make_shared<typed_buffer>(buf, count, type);  // before a receive may land in buf
    auto r = std::make_shared<sendrecv_request>();
    r->recv = start_recv(buf, count, type, source, recvtag, c);
    auto sent = protocol::get().isend(copy->base, count, type, dest, sendtag, c, c->p2p(), false);
    sent->op->owner = std::move(copy);  // the message may still leave from it after the request is freed
    r->send = std::move(sent);
    return wait_or_hand_out(std::move(r), status, request);
}

int persistent_send(const send_args& s, communicator* c, send_mode mode, MPI_Request* request, const char*) {
    return persistent(
        c,
        [s, c, mode]() -> std::shared_ptr<detail::request> {
            if (mode == send_mode::buffered) return start_buffered(s.buf, s.count, s.datatype, s.dest, s.tag, c);
            return start_send(s.buf, s.count, s.datatype, s.dest, s.tag, c, mode == send_mode::synchronous);
        },
        request);
}

int recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Request* request,
              const char*) {
    return persistent(
        c, [=] { return start_recv(buf, count, type, source, tag, c); }, request);
}

int probe(int source, int tag, communicator* c, MPI_Status* status, const char*) {
    protocol& p = protocol::get();
    if (source == MPI_PROC_NULL) {
        empty_status(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    if (p.replaying() && !p.probe(source, tag, c, c->p2p(), status)) probe_not_replayable(p);
    p.wait_until([&] { return p.probe(source, tag, c, c->p2p(), status) != nullptr; });
    return MPI_SUCCESS;
}

int iprobe(int source, int tag, communicator* c, int* flag, MPI_Status* status, const char*) {
    if (source == MPI_PROC_NULL) {  // found at once, as MPI says
        *flag = 1;
        empty_status(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    protocol& p = protocol::get();
    p.progress_pending();
    *flag = p.probe(source, tag, c, c->p2p(), status) != nullptr;
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail::entry
