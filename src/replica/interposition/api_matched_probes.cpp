// Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv): a probe
// takes the message off the protocol's unexpected messages, and the
// MPI_Message handle the program gets is this layer's own, for that
// message alone.

#include "api.hpp"
#include "entry_points.hpp"

#include <unordered_map>

namespace rampart::replica::detail::entry {

namespace {

struct matched_message {
    std::shared_ptr<inbound> in;
    communicator* comm;
    std::shared_ptr<comm_use> uses_comm;  // the program may free comm before it receives
};

// The messages probed and not yet received, by handle.
std::unordered_map<MPI_Message, matched_message>& probed() {
    static auto* all = new std::unordered_map<MPI_Message, matched_message>();
    return *all;
}

MPI_Message handle_of(std::shared_ptr<inbound> in, communicator* c) {
    auto h = reinterpret_cast<MPI_Message>(in.get());
    probed()[h] = matched_message{std::move(in), c, std::make_shared<comm_use>(c)};
    return h;
}

// MPI_Mprobe waits for a message; MPI_Improbe (with a flag) only looks.
std::shared_ptr<inbound> take(int source, int tag, communicator* c, bool wait, MPI_Status* status) {
    protocol& p = protocol::get();
    std::shared_ptr<inbound> in;
    if (!wait) {
        p.progress_pending();
        return p.take_probed(source, tag, c, c->p2p(), status);
    }
    if (p.replaying() && !(in = p.take_probed(source, tag, c, c->p2p(), status))) probe_not_replayable(p);
    p.wait_until([&] { return in || (in = p.take_probed(source, tag, c, c->p2p(), status)); });
    return in;
}

}  // namespace

int mprobe(int source, int tag, communicator* c, int* flag, MPI_Message* message, MPI_Status* status, const char*) {
    if (source == MPI_PROC_NULL) {
        if (flag) *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        empty_status(status, MPI_PROC_NULL);
        return MPI_SUCCESS;
    }
    auto in = take(source, tag, c, !flag, status);
    if (flag) *flag = in != nullptr;
    if (in) *message = handle_of(std::move(in), c);
    return MPI_SUCCESS;
}

// Its count is checked here, on the communicator of the probed message.
int mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status, MPI_Request* request,
          const char* fn) {
    std::shared_ptr<detail::request> r;
    if (*message == MPI_MESSAGE_NO_PROC) {
        auto none = std::make_shared<recv_request>();
        empty_status(&none->status, MPI_PROC_NULL);
        none->complete = true;
        r = std::move(none);
    } else {
        auto it = probed().find(*message);
        if (it == probed().end()) return program_error(nullptr, MPI_ERR_REQUEST, fn, "a message no matched probe gave");
        const matched_message m = it->second;
        if (int rc = check_buffer(m.comm, count, type, fn)) return rc;
        probed().erase(it);
        r = protocol::get().receive_taken(m.in, buf, count, type, m.comm, m.comm->p2p());
    }
    *message = MPI_MESSAGE_NULL;
    return wait_or_hand_out(std::move(r), status, request);
}

}  // namespace rampart::replica::detail::entry
