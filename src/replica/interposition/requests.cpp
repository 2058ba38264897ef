#include "requests.hpp"

#include "protocol.hpp"

#include <stdexcept>
#include <unordered_map>

namespace rampart::replica::detail {

bool send_request::done() const {
    return (op->complete || op->buffered) && (!op->synchronous || protocol::get().matched_everywhere(*op));
}

MPI_Status send_request::final_status() const {
    MPI_Status st = status;
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    st.MPI_ERROR = op->error;
    PMPI_Status_set_elements(&st, MPI_BYTE, 0);
    return st;
}

namespace {
// The program's requests by handle: they live while it holds the handle.
std::unordered_map<MPI_Request, std::shared_ptr<request>>& live() {
    static auto* all = new std::unordered_map<MPI_Request, std::shared_ptr<request>>();
    return *all;
}
}  // namespace

MPI_Request to_handle(std::shared_ptr<request> r) {
    auto h = reinterpret_cast<MPI_Request>(r.get());
    live()[h] = std::move(r);
    return h;
}

std::shared_ptr<request> from_handle(MPI_Request h) {
    auto it = live().find(h);
    if (it == live().end()) throw std::invalid_argument("a request that is not one of this program's");
    return it->second;
}

void release_handle(MPI_Request h) { live().erase(h); }

}  // namespace rampart::replica::detail
