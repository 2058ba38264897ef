#pragma once
// What the MPI entry points of this layer share: finding the protocol and
// the program's communicators, and reporting the program's errors as MPI
// would (fatal unless the communicator returns errors).

#include "communicators.hpp"
#include "protocol.hpp"
#include "requests.hpp"

#include <mpi.h>

#include <string>

namespace rampart::replica::detail {

/// The protocol, once MPI_Init has run; ends the job with a message naming
/// `fn` when it has not.
protocol& started(const char* fn);

/// An error of the program in a call: with MPI_ERRORS_RETURN on the
/// communicator, its code; else the job ends with a message naming the
/// call (printed by one replica of the rank).
int program_error(const communicator* c, int code, const char* fn, const std::string& what);

/// Calls the program's own error handler of `c` with `code`; false when
/// `c` has one of MPI's.
bool call_user_errhandler(const communicator& c, int code);

/// The attributes of a communicator being duplicated, through their keys'
/// copy callbacks: MPI_SUCCESS or the error a callback returned.
int copy_attributes(const communicator& from, communicator& to);
/// Deletes every attribute of `c`, last set first, through the delete callbacks.
int delete_attributes(communicator& c);

/// A new communicator of the same ranks, topology and error handler (no
/// attributes), its id agreed over `c`.
communicator* duplicate(communicator& c);

/// The communicator behind a handle, or nullptr after reporting the error.
communicator* find_comm(MPI_Comm c, const char* fn, int* rc);

/// The checks of arguments by kind (generate_entry_points.py): MPI_SUCCESS,
/// or the error as program_error reports it.
int check_peer(const communicator* c, int peer, bool any_allowed, const char* fn);
int check_tag(const communicator* c, int tag, bool any_allowed, const char* fn);
int check_buffer(const communicator* c, int count, MPI_Datatype type, const char* fn);
/// The root of a collective, every count of a vector form, an array or
/// pointer the program must give (`code` when it is null), a count of
/// requests.
int check_root(const communicator* c, int root, const char* fn);
int check_rank(const communicator* c, int rank, const char* fn);
int check_counts(const communicator* c, const int* counts, MPI_Datatype type, const char* fn);
int check_present(const communicator* c, const void* pointer, const char* what, int code, const char* fn);
int check_not_negative(const communicator* c, int count, const char* what, const char* fn);
/// A communicator with a Cartesian topology.
int check_cartesian(const communicator* c, const char* fn);

/// Waits for an operation the program has no handle of, and copies its
/// status out: the blocking calls.
int wait_for(const std::shared_ptr<request>& r, MPI_Status* status);
/// Blocking (no `handle`): wait_for; else hands the operation to the program.
int wait_or_hand_out(std::shared_ptr<request> r, MPI_Status* status, MPI_Request* handle);
/// A re-created replica replays its set-up: a probe there must find what
/// its survivor's found, else the job ends.
[[noreturn]] void probe_not_replayable(protocol& p);

/// Waits for a request and copies its status out; releases a finished
/// non-persistent request's handle.
int complete(MPI_Request* handle, MPI_Status* status);

/// This layer cannot do `fn` in replicated runs: the job ends, naming it.
[[noreturn]] void unsupported(const char* fn);
/// The status of an operation with nothing in it (MPI's empty status): of a
/// null or inactive request, or of a probe of MPI_PROC_NULL (`source`).
void empty_status(MPI_Status* status, int source = MPI_ANY_SOURCE);

}  // namespace rampart::replica::detail
