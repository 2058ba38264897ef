// Argument checks and error reporting shared by the MPI entry points.

#include "api.hpp"

#include "datatypes.hpp"

#include <cstdio>
#include <cstdlib>

namespace rampart::replica::detail {

protocol& started(const char* fn) {
    if (!protocol::initialized()) {
        std::fprintf(stderr, "rampart-replica: %s called before MPI_Init\n", fn);
        std::fflush(nullptr);
        std::_Exit(3);
    }
    return protocol::get();
}

int program_error(const communicator* c, int code, const char* fn, const std::string& what) {
    if (c && c->errhandler == MPI_ERRORS_RETURN) return code;
    if (c && call_user_errhandler(*c, code)) return code;
    protocol& p = protocol::get();
    p.abort_job(6, std::string(fn) + " on rank " + std::to_string(p.rank()) + ": " + what);
}

communicator* find_comm(MPI_Comm c, const char* fn, int* rc) {
    communicator* comm = communicators::get().find(c);
    if (!comm) *rc = program_error(nullptr, MPI_ERR_COMM, fn, "an invalid communicator");
    return comm;
}

int check_peer(const communicator* c, int peer, bool any_allowed, const char* fn) {
    if (peer == MPI_PROC_NULL || (any_allowed && peer == MPI_ANY_SOURCE)) return MPI_SUCCESS;
    if (peer < 0 || peer >= c->size())
        return program_error(c, MPI_ERR_RANK, fn,
                             "rank " + std::to_string(peer) + " in a communicator of " + std::to_string(c->size()));
    return MPI_SUCCESS;
}

int check_tag(const communicator* c, int tag, bool any_allowed, const char* fn) {
    if ((any_allowed && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= max_app_tag)) return MPI_SUCCESS;
    return program_error(c, MPI_ERR_TAG, fn,
                         "tag " + std::to_string(tag) + " (0 to " + std::to_string(max_app_tag) +
                             " under replication, the communicator's MPI_TAG_UB)");
}

int check_buffer(const communicator* c, int count, MPI_Datatype type, const char* fn) {
    if (count < 0) return program_error(c, MPI_ERR_COUNT, fn, "count " + std::to_string(count));
    if (type == MPI_DATATYPE_NULL) return program_error(c, MPI_ERR_TYPE, fn, "MPI_DATATYPE_NULL");
    return MPI_SUCCESS;
}

int check_root(const communicator* c, int root, const char* fn) {
    if (root >= 0 && root < c->size()) return MPI_SUCCESS;
    return program_error(c, MPI_ERR_ROOT, fn, "root " + std::to_string(root) + " of " + std::to_string(c->size()));
}

int check_rank(const communicator* c, int rank, const char* fn) {
    if (rank >= 0 && rank < c->size()) return MPI_SUCCESS;
    return program_error(c, MPI_ERR_RANK, fn, "rank " + std::to_string(rank) + " of " + std::to_string(c->size()));
}

int check_counts(const communicator* c, const int* counts, MPI_Datatype type, const char* fn) {
    if (!counts) return program_error(c, MPI_ERR_COUNT, fn, "no array of counts");
    for (int i = 0; i < c->size(); ++i)
        if (int rc = check_buffer(c, counts[i], type, fn)) return rc;
    return MPI_SUCCESS;
}

int check_present(const communicator* c, const void* pointer, const char* what, int code, const char* fn) {
    if (pointer) return MPI_SUCCESS;
    return program_error(c, code, fn, std::string(what) + " is a null pointer");
}

int check_not_negative(const communicator* c, int count, const char* what, const char* fn) {
    if (count >= 0) return MPI_SUCCESS;
    return program_error(c, MPI_ERR_ARG, fn, std::string(what) + " " + std::to_string(count));
}

int check_cartesian(const communicator* c, const char* fn) {
    if (!c->dims.empty()) return MPI_SUCCESS;
    return program_error(c, MPI_ERR_TOPOLOGY, fn, "a communicator without a Cartesian topology");
}

int wait_for(const std::shared_ptr<request>& r, MPI_Status* status) {
    protocol::get().wait_until([&] { return r->done(); });
    const MPI_Status st = r->final_status();
    if (status != MPI_STATUS_IGNORE) *status = st;
    return st.MPI_ERROR;
}

int wait_or_hand_out(std::shared_ptr<request> r, MPI_Status* status, MPI_Request* handle) {
    if (!handle) return wait_for(r, status);
    *handle = to_handle(std::move(r));
    return MPI_SUCCESS;
}

void probe_not_replayable(protocol& p) {
    p.abort_job(3, "the re-created replica of rank " + std::to_string(p.rank()) +
                       " probes in its set-up for a message its survivor never received there");
}

int complete(MPI_Request* handle, MPI_Status* status) {
    std::shared_ptr<request> r = from_handle(*handle);
    const MPI_Status st = r->final_status();
    if (status != MPI_STATUS_IGNORE) *status = st;
    const int rc = st.MPI_ERROR;
    if (r->persistent) {
        r->active = false;
    } else {
        release_handle(*handle);
        *handle = MPI_REQUEST_NULL;
    }
    return rc;
}

void empty_status(MPI_Status* status, int source) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = source;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
}

// Every replica of the rank reaches the call: the first live one prints,
// and the whole job ends (a process that just exits would leave the others
// waiting for it).
void unsupported(const char* fn) {
    const std::string what = std::string(fn) +
                             " is not supported under process replication (rampart-run --replicas); see "
                             "docs/replica.md for what is";
    if (!protocol::initialized()) {
        std::fprintf(stderr, "rampart-replica: %s\n", what.c_str());
        std::fflush(nullptr);
        std::_Exit(7);
    }
    protocol& p = protocol::get();
    p.abort_job(7, what);
}

}  // namespace rampart::replica::detail
