// The error handlers of the program's communicators: MPI's predefined
// ones, and the program's own (MPI_Comm_create_errhandler), which this
// layer calls itself with the program's communicator handle.

#include "api.hpp"
#include "entry_points.hpp"

#include <unordered_map>

namespace {

std::unordered_map<MPI_Errhandler, MPI_Comm_errhandler_function*>& user_handlers() {
    static auto* all = new std::unordered_map<MPI_Errhandler, MPI_Comm_errhandler_function*>();
    return *all;
}

bool predefined(MPI_Errhandler h) {
    return h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT;
}

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

namespace rampart::replica::detail::entry {

int create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler, const char*) {
    // MPI's own handle, so that the handle is unique and MPI_Errhandler_c2f knows it.
    if (int rc = PMPI_Comm_create_errhandler(function, errhandler)) return rc;
    user_handlers()[*errhandler] = function;
    return MPI_SUCCESS;
}

int set_errhandler(communicator* c, MPI_Errhandler errhandler, const char* fn) {
    if (!predefined(errhandler) && !user_handlers().count(errhandler))
        return program_error(c, MPI_ERR_ARG, fn, "an invalid error handler");
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}

int get_errhandler(communicator* c, MPI_Errhandler* errhandler, const char*) {
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}

// The handlers stay (a communicator may still use one): only the handle ends.
int free_errhandler(MPI_Errhandler* errhandler, const char* fn) {
    if (*errhandler == MPI_ERRHANDLER_NULL)
        return program_error(communicators::get().self(), MPI_ERR_ARG, fn, "MPI_ERRHANDLER_NULL");
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int call_errhandler(communicator* c, int errorcode, const char*) {
    if (c->errhandler == MPI_ERRORS_RETURN || call_user_errhandler(*c, errorcode)) return MPI_SUCCESS;
    protocol& p = protocol::get();
    p.abort_job(6, "MPI_Comm_call_errhandler on rank " + std::to_string(p.rank()) +
                       " with a fatal error handler: " + error_text(errorcode));
}

}  // namespace rampart::replica::detail::entry
