#include "communicators.hpp"

#include <algorithm>
#include <numeric>

namespace rampart::replica::detail {

int communicator::rank_of(int logical) const {
    auto it = std::find(ranks.begin(), ranks.end(), logical);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

communicators& communicators::get() {
    static communicators* all = new communicators();  // lives until the process ends
    return *all;
}

void communicators::make_predefined(int ranks, int my_rank) {
    std::vector<int> everyone(static_cast<std::size_t>(ranks));
    std::iota(everyone.begin(), everyone.end(), 0);
    world_ = make(0, everyone);
    world_->name = "MPI_COMM_WORLD";
    world_->my_rank = my_rank;
    self_ = make(1, {my_rank});
    self_->name = "MPI_COMM_SELF";
    used_.set(group_creation_id);
}

communicator* communicators::find(MPI_Comm c) const {
    if (c == MPI_COMM_WORLD) return world_;
    if (c == MPI_COMM_SELF) return self_;
    auto* p = reinterpret_cast<communicator*>(c);
    return std::find(all_.begin(), all_.end(), p) != all_.end() ? p : nullptr;
}

MPI_Comm communicators::handle(communicator* c) const {
    if (c == world_) return MPI_COMM_WORLD;
    if (c == self_) return MPI_COMM_SELF;
    return reinterpret_cast<MPI_Comm>(c);
}

communicator* communicators::make(int id, std::vector<int> ranks) {
    auto* c = new communicator();
    c->id = id;
    c->ranks = std::move(ranks);
    all_.push_back(c);
    used_.set(static_cast<std::size_t>(id));
    return c;
}

// The id is free at once: when operations pending on the communicator end
// differs between replicas, and the ids a new communicator may take must
// not (the replicas agree on one together).
void communicators::free(communicator* c) {
    all_.erase(std::remove(all_.begin(), all_.end(), c), all_.end());
    // Split communicators share an id: it is free once none holds it.
    if (std::none_of(all_.begin(), all_.end(), [&](communicator* o) { return o->id == c->id; }))
        used_.reset(static_cast<std::size_t>(c->id));
    c->freed = true;
    if (c->uses == 0) delete c;
}

comm_use::comm_use(communicator* c) : c_(c) {
    if (c_) ++c_->uses;
}

comm_use& comm_use::operator=(comm_use&& o) noexcept {
    if (this != &o) {
        comm_use gone(std::move(*this));
        c_ = o.c_;
        o.c_ = nullptr;
    }
    return *this;
}

comm_use::~comm_use() {
    if (c_ && --c_->uses == 0 && c_->freed) delete c_;
}

namespace {
std::vector<group*>& groups() {
    static auto* all = new std::vector<group*>();
    return *all;
}
}  // namespace

group* to_group(MPI_Group g) {
    static group empty;
    if (g == MPI_GROUP_EMPTY) return &empty;
    auto* p = reinterpret_cast<group*>(g);
    auto& all = groups();
    return std::find(all.begin(), all.end(), p) != all.end() ? p : nullptr;
}

MPI_Group group_handle(group* g) { return reinterpret_cast<MPI_Group>(g); }

group* new_group(std::vector<int> ranks) {
    auto* g = new group{std::move(ranks)};
    groups().push_back(g);
    return g;
}

void free_group(group* g) {
    auto& all = groups();
    all.erase(std::remove(all.begin(), all.end(), g), all.end());
    delete g;
}

}  // namespace rampart::replica::detail
