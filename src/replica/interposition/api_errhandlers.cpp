// The error handlers of the program's communicators: MPI's predefined
// ones, and the program's own (MPI_Comm_create_errhandler), which this
// layer calls itself with the program's communicator handle.

#include "api.hpp"

#include <unordered_map>

namespace rp = rampart::replica::detail;

namespace {

std::unordered_map<MPI_Errhandler, MPI_Comm_errhandler_function*>& user_handlers() {
    static auto* all = new std::unordered_map<MPI_Errhandler, MPI_Comm_errhandler_function*>();
    return *all;
}

bool predefined(MPI_Errhandler h) { return h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT; }

std::string error_text(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (PMPI_Error_string(code, text, &length) != MPI_SUCCESS) return "error code " + std::to_string(code);
    return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace

namespace rampart::replica::detail {

bool call_user_errhandler(const communicator& c, int code) {
    auto it = user_handlers().find(c.errhandler);
    if (it == user_handlers().end()) return false;
    MPI_Comm handle = communicators::get().handle(const_cast<communicator*>(&c));
    it->second(&handle, &code);
    return true;
}

}  // namespace rampart::replica::detail

extern "C" {

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* handler) {
    rp::started("MPI_Comm_create_errhandler");
    // MPI's own handle, so that the handle is unique and MPI_Errhandler_c2f knows it.
    if (int rc = PMPI_Comm_create_errhandler(fn, handler)) return rc;
    user_handlers()[*handler] = fn;
    return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler handler) {
    return rp::with_comm(comm, "MPI_Comm_set_errhandler", [&](rp::communicator& c) {
        if (!predefined(handler) && !user_handlers().count(handler))
            return rp::program_error(&c, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "an invalid error handler");
        c.errhandler = handler;
        return MPI_SUCCESS;
    });
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* handler) {
    return rp::with_comm(comm, "MPI_Comm_get_errhandler", [&](rp::communicator& c) {
        *handler = c.errhandler;
        return MPI_SUCCESS;
    });
}

// The handlers stay (a communicator may still use one): only the handle ends.
int MPI_Errhandler_free(MPI_Errhandler* handler) {
    if (*handler == MPI_ERRHANDLER_NULL) return MPI_ERR_ARG;
    *handler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    return rp::with_comm(comm, "MPI_Comm_call_errhandler", [&](rp::communicator& c) {
        if (c.errhandler == MPI_ERRORS_RETURN || rp::call_user_errhandler(c, errorcode)) return MPI_SUCCESS;
        rp::protocol& p = rp::protocol::get();
        p.abort_job(6, "MPI_Comm_call_errhandler on rank " + std::to_string(p.rank()) +
                           " with a fatal error handler: " + error_text(errorcode));
    });
}

}  // extern "C"
