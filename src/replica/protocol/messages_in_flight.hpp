#pragma once
// Small helpers for the protocol's own messages on MPI_COMM_WORLD.

#include <mpi.h>

#include <algorithm>
#include <vector>

namespace rampart::replica::detail {

/// Drops the finished sends of a list whose elements hold an MPI_Request
/// `request` (a send to a dead process ends with an error: dropped too);
/// true if any was dropped.
template <class Sends>
bool drop_finished(Sends& sends) {
    bool any = false;
    for (auto it = sends.begin(); it != sends.end();) {
        int flag = 0;
        if (PMPI_Test(&it->request, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        it = sends.erase(it);
        any = true;
    }
    return any;
}

/// The whole of a matched message, as bytes.
inline std::vector<char> receive_whole(MPI_Message* msg, const MPI_Status& st) {
    int bytes = 0;
    PMPI_Get_count(&st, MPI_BYTE, &bytes);
    std::vector<char> got(static_cast<std::size_t>(std::max(bytes, 0)));
    PMPI_Mrecv(got.data(), bytes, MPI_BYTE, msg, MPI_STATUS_IGNORE);
    return got;
}

}  // namespace rampart::replica::detail
