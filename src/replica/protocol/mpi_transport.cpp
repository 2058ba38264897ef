// The protocol's transport in the library: MPI on MPI_COMM_WORLD.

#include "transport.hpp"

#include <mpi-ext.h>

#include <numeric>

namespace rampart::replica::detail {

namespace {

class mpi_transport final : public transport {
public:
    int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, bool synchronous,
              MPI_Request* request) override {
        return (synchronous ? PMPI_Issend : PMPI_Isend)(buf, count, type, dest, tag, MPI_COMM_WORLD, request);
    }
    int iprobe(int source, int tag, int* flag, MPI_Status* status) override {
        return PMPI_Iprobe(source, tag, MPI_COMM_WORLD, flag, status);
    }
    int improbe(int source, int tag, int* flag, MPI_Message* message, MPI_Status* status) override {
        return PMPI_Improbe(source, tag, MPI_COMM_WORLD, flag, message, status);
    }
    int mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message) override {
        return PMPI_Mrecv(buf, count, type, message, MPI_STATUS_IGNORE);
    }
    int imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* request) override {
        return PMPI_Imrecv(buf, count, type, message, request);
    }
    int test(MPI_Request* request, int* flag) override { return PMPI_Test(request, flag, MPI_STATUS_IGNORE); }
    int wait(MPI_Request* request) override { return PMPI_Wait(request, MPI_STATUS_IGNORE); }
    int count(const MPI_Status& status, MPI_Datatype type) override {
        int n = 0;
        PMPI_Get_count(&status, type, &n);
        return n;
    }
    std::vector<int> failed() override;
    bool split_sets(int replica, int rank) override {
        int made = PMPI_Comm_split(MPI_COMM_WORLD, replica, rank, &set_) == MPI_SUCCESS;
        if (made) PMPI_Comm_set_errhandler(set_, MPI_ERRORS_RETURN);
        PMPIX_Comm_agree(MPI_COMM_WORLD, &made);
        return made != 0;
    }
    int set_iallgatherv(const void* send, int count, void* out, const int* counts, const int* displs,
                        MPI_Request* request) override {
        return PMPI_Iallgatherv(send, count, MPI_BYTE, out, counts, displs, MPI_BYTE, set_, request);
    }
    void revoke_set() override { PMPIX_Comm_revoke(set_); }

private:
    MPI_Comm set_ = MPI_COMM_NULL;
};

std::vector<int> mpi_transport::failed() {
    MPI_Group failed = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    if (PMPIX_Comm_get_failed(MPI_COMM_WORLD, &failed) != MPI_SUCCESS) return {};
    int n = 0, acked = 0;
    PMPI_Group_size(failed, &n);
    PMPIX_Comm_ack_failed(MPI_COMM_WORLD, n, &acked);
    std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    std::iota(in.begin(), in.end(), 0);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(failed, n, in.data(), world, out.data());
    PMPI_Group_free(&failed);
    PMPI_Group_free(&world);
    return out;
}

}  // namespace

transport& mpi_world() {
    static auto* t = new mpi_transport();  // never destroyed: atexit code may call MPI, as the protocol lives
    return *t;
}

}  // namespace rampart::replica::detail
