// Conversions of the program's handles to Fortran integers and back
// (MPI_Comm_c2f and the rest). The handles of communicators, groups,
// requests and matched messages are this layer's own objects, which MPI's
// tables do not know: each gets a number here, kept for the run. The
// predefined handles keep MPI's numbers.

#include "api.hpp"

#include <unordered_map>
#include <vector>

namespace rp = rampart::replica::detail;

namespace {

template <class Handle>
class fortran_table {
public:
    fortran_table(Handle null, std::vector<std::pair<Handle, MPI_Fint>> predefined)
        : null_(null), predefined_(std::move(predefined)) {}

    MPI_Fint to_fortran(Handle h) {
        for (auto& [c, f] : predefined_)
            if (c == h) return f;
        auto [it, added] = numbers_.try_emplace(h, first + static_cast<MPI_Fint>(handles_.size()));
        if (added) handles_.push_back(h);
        return it->second;
    }

    Handle to_c(MPI_Fint f) const {
        for (auto& [c, pf] : predefined_)
            if (pf == f) return c;
        const auto i = static_cast<std::size_t>(f - first);
        return f >= first && i < handles_.size() ? handles_[i] : null_;
    }

private:
    static constexpr MPI_Fint first = 1 << 16;  // above MPI's predefined numbers
    Handle null_;
    std::vector<std::pair<Handle, MPI_Fint>> predefined_;
    std::unordered_map<Handle, MPI_Fint> numbers_;
    std::vector<Handle> handles_;
};

fortran_table<MPI_Comm>& comms() {
    static auto* t = new fortran_table<MPI_Comm>(
        MPI_COMM_NULL, {{MPI_COMM_NULL, PMPI_Comm_c2f(MPI_COMM_NULL)},
                        {MPI_COMM_WORLD, PMPI_Comm_c2f(MPI_COMM_WORLD)},
                        {MPI_COMM_SELF, PMPI_Comm_c2f(MPI_COMM_SELF)}});
    return *t;
}

fortran_table<MPI_Group>& groups() {
    static auto* t = new fortran_table<MPI_Group>(
        MPI_GROUP_NULL,
        {{MPI_GROUP_NULL, PMPI_Group_c2f(MPI_GROUP_NULL)}, {MPI_GROUP_EMPTY, PMPI_Group_c2f(MPI_GROUP_EMPTY)}});
    return *t;
}

fortran_table<MPI_Request>& requests() {
    static auto* t = new fortran_table<MPI_Request>(MPI_REQUEST_NULL,
                                                    {{MPI_REQUEST_NULL, PMPI_Request_c2f(MPI_REQUEST_NULL)}});
    return *t;
}

fortran_table<MPI_Message>& messages() {
    static auto* t = new fortran_table<MPI_Message>(
        MPI_MESSAGE_NULL, {{MPI_MESSAGE_NULL, PMPI_Message_c2f(MPI_MESSAGE_NULL)},
                           {MPI_MESSAGE_NO_PROC, PMPI_Message_c2f(MPI_MESSAGE_NO_PROC)}});
    return *t;
}

}  // namespace

extern "C" {

MPI_Fint MPI_Comm_c2f(MPI_Comm comm) { return comms().to_fortran(comm); }
MPI_Comm MPI_Comm_f2c(MPI_Fint comm) { return comms().to_c(comm); }
MPI_Fint MPI_Group_c2f(MPI_Group group) { return groups().to_fortran(group); }
MPI_Group MPI_Group_f2c(MPI_Fint group) { return groups().to_c(group); }
MPI_Fint MPI_Request_c2f(MPI_Request request) { return requests().to_fortran(request); }
MPI_Request MPI_Request_f2c(MPI_Fint request) { return requests().to_c(request); }
MPI_Fint MPI_Message_c2f(MPI_Message message) { return messages().to_fortran(message); }
MPI_Message MPI_Message_f2c(MPI_Fint message) { return messages().to_c(message); }

}  // extern "C"
