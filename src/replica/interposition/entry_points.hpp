#pragma once
// The layer's side of the MPI calls that mpi_calls.txt describes. Their C
// entry points are generated (generate_entry_points.py): by the time one of
// these runs, MPI_Init has run, its communicators and groups are the layer's
// own and the arguments have passed the checks of their kind. Each gets the call's name
// (`fn`) for the errors it finds itself.

#include "communicators.hpp"

#include <mpi.h>

namespace rampart::replica::detail::entry {

/// A send, or one half of a send-receive: a buffer, its peer and tag.
struct send_args {
    const void* buf;
    int count;
    MPI_Datatype datatype;
    int dest;
    int tag;
};
struct recv_args {
    void* buf;
    int count;
    MPI_Datatype datatype;
    int source;
    int tag;
};

enum class send_mode { standard, synchronous, buffered };

// Point to point (api_p2p.cpp). A null `request` means the blocking form.
int blocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c, bool sync,
                  const char* fn);
int nonblocking_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c, bool sync,
                     MPI_Request* request, const char* fn);
int buffered_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c,
                  MPI_Request* request, const char* fn);
int recv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Status* status,
         const char* fn);
int irecv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Request* request,
          const char* fn);
int sendrecv(const send_args& send, const recv_args& recv, communicator* c, MPI_Status* status, MPI_Request* request,
             const char* fn);
int sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                     communicator* c, MPI_Status* status, MPI_Request* request, const char* fn);
int persistent_send(const send_args& send, communicator* c, send_mode mode, MPI_Request* request, const char* fn);
int recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c, MPI_Request* request,
              const char* fn);
int probe(int source, int tag, communicator* c, MPI_Status* status, const char* fn);
int iprobe(int source, int tag, communicator* c, int* flag, MPI_Status* status, const char* fn);

// Matched probes (api_matched_probes.cpp). A null `flag` means MPI_Mprobe.
int mprobe(int source, int tag, communicator* c, int* flag, MPI_Message* message, MPI_Status* status, const char* fn);
int mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status, MPI_Request* request,
          const char* fn);

/// A collective's buffer of each rank's own part.
struct part_args {
    const void* buf;
    int count;
    MPI_Datatype datatype;
};
/// A collective's buffer of every rank's part: `count` each, one after the
/// other, or `counts` and `displs` when these are given.
struct parts_args {
    const void* buf;
    int count;
    const int* counts;
    const int* displs;
    MPI_Datatype datatype;
};

// Collectives (api_collectives.cpp).
int barrier(communicator* c, MPI_Request* request, const char* fn);
int bcast(void* buf, int count, MPI_Datatype type, int root, communicator* c, MPI_Request* request, const char* fn);
int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, communicator* c,
           MPI_Request* request, const char* fn);
int allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c,
              MPI_Request* request, const char* fn);
int gather(const part_args& own, const parts_args& all, int root, communicator* c, MPI_Request* request,
           const char* fn);
int scatter(const part_args& own, const parts_args& all, int root, communicator* c, MPI_Request* request,
            const char* fn);
int allgather(const part_args& own, const parts_args& all, communicator* c, MPI_Request* request, const char* fn);
int alltoall(const parts_args& send, const parts_args& recv, communicator* c, MPI_Request* request, const char* fn);
int reduce_scatter(const void* sendbuf, void* recvbuf, int recvcount, const int* recvcounts, MPI_Datatype type,
                   MPI_Op op, communicator* c, MPI_Request* request, const char* fn);
int scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c, bool exclusive,
         MPI_Request* request, const char* fn);

// Completing requests (api_requests.cpp). A null `flag` means the waiting form.
int wait(MPI_Request* request, MPI_Status* status, const char* fn);
int test(MPI_Request* request, int* flag, MPI_Status* status, const char* fn);
int request_get_status(MPI_Request request, int* flag, MPI_Status* status, const char* fn);
int waitall(int count, MPI_Request requests[], MPI_Status statuses[], const char* fn);
int testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[], const char* fn);
int waitany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status, const char* fn);
int waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[], bool blocking,
             const char* fn);
int request_free(MPI_Request* request, const char* fn);
int cancel(MPI_Request* request, const char* fn);
int start(MPI_Request* request, const char* fn);
int startall(int count, MPI_Request requests[], const char* fn);

// Communicators (api_comm.cpp, api_init.cpp). A null `request`: MPI_Comm_dup.
int comm_rank(communicator* c, int* rank, const char* fn);
int comm_size(communicator* c, int* size, const char* fn);
int comm_dup(communicator* c, MPI_Comm* newcomm, MPI_Request* request, const char* fn);
int comm_split(communicator* c, int color, int key, MPI_Comm* newcomm, const char* fn);
int comm_split_type(communicator* c, int split_type, int key, MPI_Info info, MPI_Comm* newcomm, const char* fn);
int comm_create(communicator* c, group* g, MPI_Comm* newcomm, const char* fn);
int comm_create_group(communicator* c, group* g, int tag, MPI_Comm* newcomm, const char* fn);
int comm_create_from_group(group* g, const char* stringtag, MPI_Errhandler errhandler, MPI_Comm* newcomm,
                           const char* fn);
int comm_free(MPI_Comm* handle, const char* fn);
int comm_compare(communicator* c, communicator* d, int* result, const char* fn);
int comm_group(communicator* c, MPI_Group* group, const char* fn);
int comm_get_parent(MPI_Comm* parent, const char* fn);
int comm_set_info(communicator* c, MPI_Info info, const char* fn);
int comm_get_info(communicator* c, MPI_Info* info_used, const char* fn);
int comm_set_name(communicator* c, const char* name, const char* fn);
int comm_get_name(communicator* c, char* name, int* length, const char* fn);
int comm_test_inter(communicator* c, int* flag, const char* fn);
int finalize(const char* fn);

// Groups (api_groups.cpp).
int group_size(group* g, int* size, const char* fn);
int group_rank(group* g, int* rank, const char* fn);
int group_incl(group* g, int n, const int ranks[], MPI_Group* newgroup, const char* fn);
int group_excl(group* g, int n, const int ranks[], MPI_Group* newgroup, const char* fn);
int group_range(group* g, int n, int ranges[][3], bool include, MPI_Group* newgroup, const char* fn);
int group_translate_ranks(group* a, int n, const int ranks1[], group* b, int ranks2[], const char* fn);
int group_union(group* a, group* b, MPI_Group* newgroup, const char* fn);
int group_intersection(group* a, group* b, MPI_Group* newgroup, const char* fn);
int group_difference(group* a, group* b, MPI_Group* newgroup, const char* fn);
int group_compare(group* a, group* b, int* result, const char* fn);
int group_free(MPI_Group* handle, const char* fn);

// Cartesian topologies (api_topology.cpp).
int cart_create(communicator* c, int ndims, const int dims[], const int periods[], MPI_Comm* newcomm, const char* fn);
int cart_map(communicator* c, int ndims, const int dims[], int* newrank, const char* fn);
int cartdim_get(communicator* c, int* ndims, const char* fn);
int cart_get(communicator* c, int maxdims, int dims[], int periods[], int coords[], const char* fn);
int cart_coords(communicator* c, int rank, int maxdims, int coords[], const char* fn);
int cart_rank(communicator* c, const int coords[], int* rank, const char* fn);
int cart_shift(communicator* c, int direction, int disp, int* source, int* dest, const char* fn);
int cart_sub(communicator* c, const int remain_dims[], MPI_Comm* newcomm, const char* fn);
int topo_test(communicator* c, int* status, const char* fn);

// Attributes (api_attributes.cpp).
int create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* remove, int* keyval,
                  void* extra_state, const char* fn);
int free_keyval(int* keyval, const char* fn);
int set_attr(communicator* c, int keyval, void* value, const char* fn);
int get_attr(communicator* c, int keyval, void* value, int* flag, const char* fn);
int delete_attr(communicator* c, int keyval, const char* fn);

// Error handlers (api_errhandlers.cpp).
int create_errhandler(MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler, const char* fn);
int set_errhandler(communicator* c, MPI_Errhandler errhandler, const char* fn);
int get_errhandler(communicator* c, MPI_Errhandler* errhandler, const char* fn);
int free_errhandler(MPI_Errhandler* errhandler, const char* fn);
int call_errhandler(communicator* c, int errorcode, const char* fn);

// Packing (api_packing.cpp), in MPI's representation for MPI_COMM_WORLD.
int pack(const void* inbuf, int incount, MPI_Datatype type, void* outbuf, int outsize, int* position, const char* fn);
int unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype type, const char* fn);
int pack_size(int incount, MPI_Datatype type, int* size, const char* fn);

}  // namespace rampart::replica::detail::entry
