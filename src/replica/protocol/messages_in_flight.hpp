#pragma once
// Small helpers for the protocol's own messages on MPI_COMM_WORLD.

#include "transport.hpp"

#include <mpi.h>

#include <algorithm>
#include <vector>

namespace rampart::replica::detail {

/// Drops the finished sends of a list whose elements hold an MPI_Request
/// `request` (a send to a dead process ends with an error: dropped too);
/// true if any was dropped.
template <class Sends>
bool drop_finished(transport& net, Sends& sends) {
    bool any = false;
    for (auto it = sends.begin(); it != sends.end();) {
        int flag = 0;
        if (net.test(&it->request, &flag) == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        it = sends.erase(it);
        any = true;
    }
    return any;
}

/// The whole of a matched message, as bytes.
inline std::vector<char> receive_whole(transport& net, MPI_Message* msg, const MPI_Status& st) {
    const int bytes = net.count(st, MPI_BYTE);
    std::vector<char> got(static_cast<std::size_t>(std::max(bytes, 0)));
    net.mrecv(got.data(), bytes, MPI_BYTE, msg);
    return got;
}

}  // namespace rampart::replica::detail
