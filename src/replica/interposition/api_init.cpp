// Start and end of the program's MPI, and what a communicator tells of
// itself.

#include "api.hpp"
#include "entry_points.hpp"

#include <rampart/replica/replica.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace rp = rampart::replica::detail;

namespace {
// MPI's Fortran bindings call MPI's C library below this layer: a program
// that calls MPI from Fortran would bypass replication, each replica a rank
// of its own. Their entry points go by the names Fortran compilers give
// MPI_INIT.
bool fortran_bindings_loaded() {
    for (const char* name : {"mpi_init_", "mpi_init__", "MPI_INIT", "mpi_init_f08"})
        if (::dlsym(RTLD_DEFAULT, name)) return true;
    return false;
}
const char* const fortran_refusal =
    "a program with MPI's Fortran bindings loaded (their calls go to MPI past the layer)";

// Checked when the library is loaded, with the program's own libraries:
// its MPI_INIT would never reach this layer's MPI_Init. Every process
// finds it; process 0 says so, and leaves a mark beside rampart-run's
// reports once it has. The others end after that mark (or 10 s): had one
// ended first, the launcher could have ended the job, process 0 and its
// message with it.
__attribute__((constructor)) void refuse_fortran_programs() {
    if (!fortran_bindings_loaded() || !std::getenv("RAMPART_REPLICAS")) return;
    const char* process = std::getenv("OMPI_COMM_WORLD_RANK");
    const char* reports = std::getenv("RAMPART_REPORT");
    const std::string said = reports ? std::string(reports) + ".refused" : std::string();
    if (!process || std::strcmp(process, "0") == 0) {
        std::fprintf(stderr,
                     "rampart-replica: %s is not supported under process replication (rampart-run "
                     "--replicas); see docs/replica.md for what is\n",
                     fortran_refusal);
        std::fflush(nullptr);
        if (!said.empty()) ::close(::open(said.c_str(), O_CREAT | O_WRONLY, 0644));
        std::_Exit(7);
    }
    for (int waited_ms = 0; waited_ms < 10000 && (said.empty() || ::access(said.c_str(), F_OK) != 0); waited_ms += 10)
        ::usleep(10000);
    std::_Exit(7);
}

// Bindings loaded later (a Python extension's, say) are found at MPI_Init.
void refuse_fortran_bindings() {
    if (fortran_bindings_loaded()) rp::unsupported(fortran_refusal);
}
}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
    rp::protocol::get().init(argc, argv, MPI_THREAD_SINGLE, nullptr);
    refuse_fortran_bindings();
    return MPI_SUCCESS;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    rp::protocol::get().init(argc, argv, required, provided);
    refuse_fortran_bindings();
    return MPI_SUCCESS;
}

int MPI_Finalized(int* flag) {
    *flag = rp::protocol::initialized() && rp::protocol::get().finalized();
    return MPI_SUCCESS;
}

// The calls of rampart/replica/replica.h.
int rampart_replica_id(void) {
    if (!rp::protocol::initialized()) return 0;
    rp::protocol& p = rp::protocol::get();
    return p.where().live_position(p.rank(), p.replica());
}

int rampart_replica_count(void) { return rp::protocol::initialized() ? rp::protocol::get().where().replicas() : 1; }

void rampart_replica_protect(void* data, size_t bytes) { rp::started("rampart_replica_protect").protect(data, bytes); }

void rampart_replica_sync(void) { rp::started("rampart_replica_sync").sync(); }

// The whole job ends, whatever the communicator (the layer knows no other
// way to end a part of it): written by hand, since no argument is checked.
int MPI_Abort(MPI_Comm, int errorcode) {
    rp::protocol& p = rp::started("MPI_Abort");
    p.abort_job(errorcode == 0 ? 1 : errorcode,
                "MPI_Abort(" + std::to_string(errorcode) + ") called by rank " + std::to_string(p.rank()));
}

}  // extern "C"

namespace rampart::replica::detail::entry {

int finalize(const char*) {
    // MPI deletes MPI_COMM_SELF's attributes first: programs (mpi4py
    // among them) hang their clean-up on it.
    delete_attributes(*communicators::get().self());
    protocol::get().finalize();
    return MPI_SUCCESS;
}

int comm_rank(communicator* c, int* rank, const char*) {
    *rank = c->my_rank;
    return MPI_SUCCESS;
}

int comm_size(communicator* c, int* size, const char*) {
    *size = c->size();
    return MPI_SUCCESS;
}

int comm_set_name(communicator* c, const char* name, const char*) {
    c->name = std::string(name).substr(0, MPI_MAX_OBJECT_NAME - 1);
    return MPI_SUCCESS;
}

int comm_get_name(communicator* c, char* name, int* length, const char*) {
    std::strcpy(name, c->name.c_str());
    *length = static_cast<int>(c->name.size());
    return MPI_SUCCESS;
}

int comm_test_inter(communicator*, int* flag, const char*) {
    *flag = 0;
    return MPI_SUCCESS;
}

}  // namespace rampart::replica::detail::entry
