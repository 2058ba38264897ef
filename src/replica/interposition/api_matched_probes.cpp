// Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv): a probe
// takes the message off the protocol's unexpected messages, and the
// MPI_Message handle the program gets is this layer's own, for that
// message alone.

#include "api.hpp"

#include <unordered_map>

namespace rp = rampart::replica::detail;

namespace {

struct matched_message {
    std::shared_ptr<rp::inbound> in;
    rp::communicator* comm;
    std::shared_ptr<rp::comm_use> uses_comm;  // the program may free comm before it receives
};

// The communicator of a probe with valid source and tag; nullptr after the error.
rp::communicator* probe_comm(int source, int tag, MPI_Comm comm, const char* fn, int* rc) {
    rp::started(fn);
    rp::communicator* c = rp::find_comm(comm, fn, rc);
    if (c && ((*rc = rp::check_peer(c, source, true, fn)) || (*rc = rp::check_tag(c, tag, true, fn)))) return nullptr;
    return c;
}

void no_proc_status(MPI_Status* status) { rp::empty_status(status, MPI_PROC_NULL); }

// The messages probed and not yet received, by handle.
std::unordered_map<MPI_Message, matched_message>& probed() {
    static auto* all = new std::unordered_map<MPI_Message, matched_message>();
    return *all;
}

MPI_Message handle_of(std::shared_ptr<rp::inbound> in, rp::communicator* c) {
    auto h = reinterpret_cast<MPI_Message>(in.get());
    probed()[h] = matched_message{std::move(in), c, std::make_shared<rp::comm_use>(c)};
    return h;
}

}  // namespace

extern "C" {

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = probe_comm(source, tag, comm, "MPI_Improbe", &rc);
    if (!c) return rc;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        no_proc_status(status);
        return MPI_SUCCESS;
    }
    rp::protocol& p = rp::protocol::get();
    p.progress_pending();
    auto in = p.take_probed(source, tag, c, c->p2p(), status);
    *flag = in != nullptr;
    if (in) *message = handle_of(std::move(in), c);
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
    int rc = MPI_SUCCESS;
    rp::communicator* c = probe_comm(source, tag, comm, "MPI_Mprobe", &rc);
    if (!c) return rc;
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        no_proc_status(status);
        return MPI_SUCCESS;
    }
    rp::protocol& p = rp::protocol::get();
    std::shared_ptr<rp::inbound> in;
    if (p.replaying() && !(in = p.take_probed(source, tag, c, c->p2p(), status)))
        p.abort_job(3, "the re-created replica of rank " + std::to_string(p.rank()) +
                           " probes in its set-up for a message its survivor never received there");
    p.wait_until([&] { return in || (in = p.take_probed(source, tag, c, c->p2p(), status)); });
    *message = handle_of(std::move(in), c);
    return MPI_SUCCESS;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) {
    rp::started("MPI_Imrecv");
    if (*message == MPI_MESSAGE_NO_PROC) {
        auto r = std::make_shared<rp::recv_request>();
        no_proc_status(&r->status);
        r->complete = true;
        *request = rp::to_handle(std::move(r));
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    auto it = probed().find(*message);
    if (it == probed().end())
        return rp::program_error(nullptr, MPI_ERR_REQUEST, "MPI_Imrecv", "a message no matched probe gave");
    const matched_message m = it->second;
    if (int rc = rp::check_buffer(m.comm, count, type, "MPI_Imrecv")) return rc;
    probed().erase(it);
    *request = rp::to_handle(rp::protocol::get().receive_taken(m.in, buf, count, type, m.comm, m.comm->p2p()));
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
    MPI_Request r = MPI_REQUEST_NULL;
    if (int rc = MPI_Imrecv(buf, count, type, message, &r)) return rc;
    return MPI_Wait(&r, status);
}

}  // extern "C"
