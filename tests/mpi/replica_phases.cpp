// A plain MPI program whose receives from MPI_ANY_SOURCE rely on collectives
// alone to keep phases apart: in each phase every rank but 0 sends rank 0 a
// message with the same tag, rank 0 takes as many from any source, and a
// broadcast from rank 0 on a communicator other than the world (so the
// replication layer runs it with its own point-to-point messages) ends the
// phase. Natively no message is ever taken in another phase than its own.
// Under replication, a replica that sends in the place of a dead sibling
// runs at the pace of its own replica set; its messages of the next phase
// must not reach a rank 0 still in an earlier one.
// usage: replica_phases [phases]

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    const int phases = argc > 1 ? std::atoi(argv[1]) : 400;
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm phase_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &phase_comm);
    constexpr int tag = 7;
    std::uint64_t sum = 1469598103934665603ull;  // at rank 0: what each phase took, in order of phases
    long out_of_phase = 0;
    for (int phase = 0; phase < phases; ++phase) {
        std::int64_t tally[2] = {0, 0};  // rank 0: the phase's sum, and messages from another phase
        if (rank == 0) {
            for (int i = 1; i < size; ++i) {
                std::int64_t got[2];
                MPI_Status st;
                MPI_Recv(got, 2, MPI_INT64_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                if (got[0] != phase || got[1] != st.MPI_SOURCE) ++tally[1];
                tally[0] += got[0] * size + got[1];
            }
        } else {
            const std::int64_t mine[2] = {phase, rank};
            MPI_Send(mine, 2, MPI_INT64_T, 0, tag, MPI_COMM_WORLD);
        }
        MPI_Bcast(tally, 2, MPI_INT64_T, 0, phase_comm);
        out_of_phase += tally[1];
        sum = (sum ^ static_cast<std::uint64_t>(tally[0])) * 1099511628211ull;
    }
    MPI_Comm_free(&phase_comm);
    if (rank == 0)
        std::printf("phases %d, messages taken in another phase %ld, checksum %016llx\n", phases, out_of_phase,
                    static_cast<unsigned long long>(sum ^ static_cast<std::uint64_t>(out_of_phase)));
    MPI_Finalize();
    return 0;
}
