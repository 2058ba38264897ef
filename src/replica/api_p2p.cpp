// The program's point-to-point calls under replication.

#include "api.hpp"

namespace rp = rampart::replica::detail;

namespace {

int check_send(int count, MPI_Datatype type, int dest, int tag, MPI_Comm c, const char* fn, rp::communicator** out) {
    rp::started(fn);
    int rc = MPI_SUCCESS;
    rp::communicator* comm = rp::find_comm(c, fn, &rc);
    if (!comm) return rc;
    if ((rc = rp::check_peer(comm, dest, false, fn)) || (rc = rp::check_tag(comm, tag, false, fn)) ||
        (rc = rp::check_buffer(comm, count, type, fn)))
        return rc;
    *out = comm;
    return MPI_SUCCESS;
}

int start_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm c, bool sync, const char* fn,
               std::shared_ptr<rp::request>* out) {
    rp::communicator* comm = nullptr;
    if (int rc = check_send(count, type, dest, tag, c, fn, &comm)) return rc;
    *out = rp::protocol::get().isend(buf, count, type, dest, tag, comm, comm->p2p(), sync);
    return MPI_SUCCESS;
}

int start_recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c, const char* fn,
               std::shared_ptr<rp::request>* out) {
    rp::protocol& p = rp::started(fn);
    int rc = MPI_SUCCESS;
    rp::communicator* comm = rp::find_comm(c, fn, &rc);
    if (!comm) return rc;
    if ((rc = rp::check_peer(comm, source, true, fn)) || (rc = rp::check_tag(comm, tag, true, fn)) ||
        (rc = rp::check_buffer(comm, count, type, fn)))
        return rc;
    *out = p.irecv(buf, count, type, source, tag, comm, comm->p2p());
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

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    std::shared_ptr<rp::request> r, s;
    if (int rc = start_recv(recvbuf, recvcount, recvtype, source, recvtag, comm, "MPI_Sendrecv", &r)) return rc;
    if (int rc = start_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, false, "MPI_Sendrecv", &s)) return rc;
    const int send_rc = wait_for(s, MPI_STATUS_IGNORE);
    const int recv_rc = wait_for(r, status);
    return send_rc != MPI_SUCCESS ? send_rc : recv_rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
    // The outgoing data leave from a copy, so the receive may land in buf.
    rp::started("MPI_Sendrecv_replace");
    int bytes = 0;
    PMPI_Pack_size(count, type, MPI_COMM_WORLD, &bytes);
    std::vector<char> copy(static_cast<std::size_t>(bytes));
    int position = 0;
    PMPI_Pack(buf, count, type, copy.data(), bytes, &position, MPI_COMM_WORLD);
    return MPI_Sendrecv(copy.data(), position, MPI_PACKED, dest, sendtag, buf, count, type, source, recvtag, comm,
                        status);
}

int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request* request) {
    rp::communicator* c = nullptr;
    if (int rc = check_send(count, type, dest, tag, comm, "MPI_Send_init", &c)) return rc;
    auto r = std::make_shared<rp::persistent_request>();
    r->persistent = true;
    r->active = false;
    r->make = [=]() -> std::shared_ptr<rp::request> {
        return rp::protocol::get().isend(buf, count, type, dest, tag, c, c->p2p(), false);
    };
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
    rp::protocol& p = rp::started("MPI_Recv_init");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Recv_init", &rc);
    if (!c) return rc;
    if ((rc = rp::check_peer(c, source, true, "MPI_Recv_init")) || (rc = rp::check_tag(c, tag, true, "MPI_Recv_init")))
        return rc;
    auto r = std::make_shared<rp::persistent_request>();
    r->persistent = true;
    r->active = false;
    r->make = [=, &p]() -> std::shared_ptr<rp::request> { return p.irecv(buf, count, type, source, tag, c, c->p2p()); };
    *request = rp::to_handle(std::move(r));
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Probe");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Probe", &rc);
    if (!c) return rc;
    if ((rc = rp::check_peer(c, source, true, "MPI_Probe")) || (rc = rp::check_tag(c, tag, true, "MPI_Probe")))
        return rc;
    if (source == MPI_PROC_NULL) return MPI_SUCCESS;
    p.wait_until([&] { return p.probe(source, tag, c, c->p2p(), status) != nullptr; });
    return MPI_SUCCESS;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    rp::protocol& p = rp::started("MPI_Iprobe");
    int rc = MPI_SUCCESS;
    rp::communicator* c = rp::find_comm(comm, "MPI_Iprobe", &rc);
    if (!c) return rc;
    if ((rc = rp::check_peer(c, source, true, "MPI_Iprobe")) || (rc = rp::check_tag(c, tag, true, "MPI_Iprobe")))
        return rc;
    p.progress();
    *flag = source != MPI_PROC_NULL && p.probe(source, tag, c, c->p2p(), status) != nullptr;
    return MPI_SUCCESS;
}

}  // extern "C"
