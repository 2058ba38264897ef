#include "collectives.hpp"

#include "datatypes.hpp"
#include "protocol.hpp"

#include <algorithm>
#include <cstring>

namespace rampart::replica::detail {

bool schedule::advance() {
    for (;;) {
        for (auto& r : current)
            if (!r->done()) return false;
        current.clear();
        if (next == rounds.size()) return true;
        rounds[next++](current);
    }
}

// Only to the first round that sends: how far advance() would go depends
// on which messages have arrived, and the replicas of a rank must send the
// same messages in the same order.
void schedule::start() {
    while (current.empty() && next < rounds.size()) rounds[next++](current);
}

void schedule::then(const schedule_ptr& more) {
    for (auto& r : more->rounds) rounds.push_back(std::move(r));
}

// A blocking collective orders the program's messages (collective_order.hpp).
int run(const schedule_ptr& s) {
    protocol& p = protocol::get();
    const communicator* c = s->uses_comm.get();
    if (c) p.collective_entered(*c);
    p.wait_until([&] { return s->advance(); });
    if (c) p.collective_passed(*c);
    return MPI_SUCCESS;
}

MPI_Request as_request(const schedule_ptr& s) {
    s->start();
    auto r = std::make_shared<collective_request>();
    r->advance = [s] { return s->advance(); };
    r->status.MPI_ERROR = MPI_SUCCESS;
    return to_handle(std::move(r));
}

namespace {

// Each collective on a communicator has its own tag, the same on every
// rank (collectives are called in the same order everywhere), so that
// nonblocking ones in flight together never take each other's messages.
int next_tag(communicator* c) {
    const int tag = c->collectives;
    c->collectives = (c->collectives + 1) & max_app_tag;
    return tag;
}

// `same`: the round sends this buffer to several ranks (copied and hashed once).
std::shared_ptr<request> post_send(const void* buf, int count, MPI_Datatype type, int dest, int tag, communicator* c,
                                   same_data* same = nullptr) {
    return protocol::get().isend(buf, count, type, dest, tag, c, c->coll(), false, same);
}

std::shared_ptr<request> post_recv(void* buf, int count, MPI_Datatype type, int source, int tag, communicator* c) {
    return protocol::get().irecv(buf, count, type, source, tag, c, c->coll());
}

MPI_Aint extent_of(MPI_Datatype type) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

char* offset(void* buf, int displ, MPI_Datatype type) { return static_cast<char*>(buf) + displ * extent_of(type); }

// A reduction's running result and the buffer its next operand arrives in;
// the first round of the schedule takes this rank's operand.
struct reduction {
    std::shared_ptr<typed_buffer> acc, in;
    int count;
    MPI_Datatype type;
    MPI_Op op;

    reduction(schedule& s, const void* sendbuf, void* recvbuf, int n, MPI_Datatype t, MPI_Op o)
        : acc(std::make_shared<typed_buffer>(n, t)), in(std::make_shared<typed_buffer>(n, t)), count(n), type(t),
          op(o) {
        const void* mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
        s.rounds.push_back([mine, a = acc, n, t](auto&) { copy_data(mine, n, t, a->base, n, t); });
    }
    /// acc = acc op in when this rank's block is on the left, else in op acc.
    void combine(bool mine_left) const {
        if (!mine_left) {
            PMPI_Reduce_local(in->base, acc->base, count, type, op);
            return;
        }
        PMPI_Reduce_local(acc->base, in->base, count, type, op);  // in = acc op in
        std::swap(acc->bytes, in->bytes);
        std::swap(acc->base, in->base);
    }
};
const char* offset(const void* buf, int displ, MPI_Datatype type) {
    return static_cast<const char*>(buf) + displ * extent_of(type);
}

}  // namespace

// Binomial tree from the root: receive from the parent, then send to the children.
schedule_ptr bcast(void* buf, int count, MPI_Datatype type, int root, communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), tag = next_tag(c);
    const int rel = (c->my_rank - root + size) % size;
    int mask = 1;
    while (mask < size && !(rel & mask)) mask <<= 1;
    if (rel != 0)
        s->rounds.push_back(
            [=](auto& out) { out.push_back(post_recv(buf, count, type, (rel - mask + root) % size, tag, c)); });
    s->rounds.push_back([=](auto& out) {
        same_data same;
        for (int m = mask >> 1; m > 0; m >>= 1)
            if (rel + m < size) out.push_back(post_send(buf, count, type, (rel + m + root) % size, tag, c, &same));
    });
    return s;
}

// Binomial tree to rank 0 that combines neighbouring blocks of ranks, lower
// ranks on the left: the order of the operands is the ranks' order, as
// MPI requires for operations that do not commute; then to the root.
schedule_ptr reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                    communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    const reduction r(*s, sendbuf, recvbuf, count, type, op);
    const auto acc = r.acc;
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            s->rounds.push_back(
                [=](auto& out) { out.push_back(post_send(acc->base, count, type, rank - mask, tag, c)); });
            break;
        }
        if (rank + mask >= size) continue;
        s->rounds.push_back([=](auto& out) { out.push_back(post_recv(r.in->base, count, type, rank + mask, tag, c)); });
        s->rounds.push_back([=](auto&) { r.combine(true); });
    }
    if (rank == 0 && root == 0)
        s->rounds.push_back([=](auto&) { copy_data(acc->base, count, type, recvbuf, count, type); });
    if (rank == 0 && root != 0)
        s->rounds.push_back([=](auto& out) { out.push_back(post_send(acc->base, count, type, root, tag, c)); });
    if (rank == root && root != 0)
        s->rounds.push_back([=](auto& out) { out.push_back(post_recv(recvbuf, count, type, 0, tag, c)); });
    return s;
}

namespace {
// Recursive doubling, for a power-of-two number of ranks: in round m each
// rank exchanges what it has combined with rank ^ m and puts the lower
// ranks' block on the left. Every rank then combines the very tree that
// reduce() combines, in half its rounds and without the broadcast.
schedule_ptr exchange_and_combine(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                  communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    const reduction r(*s, sendbuf, recvbuf, count, type, op);
    for (int mask = 1; mask < size; mask <<= 1) {
        const int partner = rank ^ mask;
        s->rounds.push_back([=](auto& out) {
            out.push_back(post_send(r.acc->base, count, type, partner, tag, c));
            out.push_back(post_recv(r.in->base, count, type, partner, tag, c));
        });
        s->rounds.push_back([=](auto&) { r.combine(rank < partner); });
    }
    s->rounds.push_back([=](auto&) { copy_data(r.acc->base, count, type, recvbuf, count, type); });
    return s;
}
}  // namespace

schedule_ptr allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c) {
    if ((c->size() & (c->size() - 1)) == 0) return exchange_and_combine(sendbuf, recvbuf, count, type, op, c);
    auto s = reduce(sendbuf, recvbuf, count, type, op, 0, c);
    s->then(bcast(recvbuf, count, type, 0, c));
    return s;
}

schedule_ptr barrier(communicator* c) { return allreduce(nullptr, nullptr, 0, MPI_BYTE, MPI_BAND, c); }

// Gather and scatter: the root exchanges a piece of its buffer with each
// rank (receives them, or sends them), the others their own buffer.
schedule_ptr with_root(bool gather, const void* own, int own_count, MPI_Datatype own_type, const void* whole,
                       const int* counts, const int* displs, MPI_Datatype whole_type, int root, communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    auto* own_memory = const_cast<void*>(own);  // written when scattering
    if (rank != root) {
        s->rounds.push_back([=](auto& out) {
            out.push_back(gather ? post_send(own, own_count, own_type, root, tag, c)
                                 : post_recv(own_memory, own_count, own_type, root, tag, c));
        });
        return s;
    }
    std::vector<int> n(counts, counts + size), where(displs, displs + size);
    s->rounds.push_back([=](auto& out) {
        for (int i = 0; i < size; ++i) {
            const auto k = static_cast<std::size_t>(i);
            char* at = const_cast<char*>(offset(whole, where[k], whole_type));
            if (i != rank)
                out.push_back(gather ? post_recv(at, n[k], whole_type, i, tag, c)
                                     : post_send(at, n[k], whole_type, i, tag, c));
            else if (own != MPI_IN_PLACE && gather)
                copy_data(own, own_count, own_type, at, n[k], whole_type);
            else if (own != MPI_IN_PLACE)
                copy_data(at, n[k], whole_type, own_memory, own_count, own_type);
        }
    });
    return s;
}

schedule_ptr gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                     const int* displs, MPI_Datatype recvtype, int root, communicator* c) {
    return with_root(true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, c);
}

schedule_ptr scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, communicator* c) {
    return with_root(false, recvbuf, recvcount, recvtype, sendbuf, sendcounts, displs, sendtype, root, c);
}

schedule_ptr allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                        const int* displs, MPI_Datatype recvtype, communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    std::vector<int> counts(recvcounts, recvcounts + size), where(displs, displs + size);
    s->rounds.push_back([=](auto& out) {
        char* mine = offset(recvbuf, where[static_cast<std::size_t>(rank)], recvtype);
        if (sendbuf != MPI_IN_PLACE)
            copy_data(sendbuf, sendcount, sendtype, mine, counts[static_cast<std::size_t>(rank)], recvtype);
        same_data same;
        for (int i = 0; i < size; ++i) {
            if (i == rank) continue;
            out.push_back(post_recv(offset(recvbuf, where[static_cast<std::size_t>(i)], recvtype),
                                    counts[static_cast<std::size_t>(i)], recvtype, i, tag, c));
            out.push_back(post_send(mine, counts[static_cast<std::size_t>(rank)], recvtype, i, tag, c, &same));
        }
    });
    return s;
}

schedule_ptr alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                       void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                       communicator* c) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    const auto n = static_cast<std::size_t>(size);
    std::vector<int> rc(recvcounts, recvcounts + n), rd(rdispls, rdispls + n);
    std::vector<int> sc = sendbuf == MPI_IN_PLACE ? rc : std::vector<int>(sendcounts, sendcounts + n);
    std::vector<int> sd = sendbuf == MPI_IN_PLACE ? rd : std::vector<int>(sdispls, sdispls + n);
    const MPI_Datatype stype = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    s->rounds.push_back([=](auto& out) {
        // In place: the data to send leave from a copy of the whole buffer.
        std::shared_ptr<std::vector<char>> copy;
        const void* from = sendbuf;
        if (sendbuf == MPI_IN_PLACE) {
            MPI_Aint extent = extent_of(recvtype), top = 0;
            for (std::size_t i = 0; i < n; ++i) top = std::max<MPI_Aint>(top, (rd[i] + rc[i]) * extent);
            copy = std::make_shared<std::vector<char>>(static_cast<const char*>(recvbuf),
                                                       static_cast<const char*>(recvbuf) + top);
            from = copy->data();
        }
        for (int i = 0; i < size; ++i) {
            const auto k = static_cast<std::size_t>(i);
            if (i == rank) {
                copy_data(offset(from, sd[k], stype), sc[k], stype, offset(recvbuf, rd[k], recvtype), rc[k], recvtype);
                continue;
            }
            out.push_back(post_recv(offset(recvbuf, rd[k], recvtype), rc[k], recvtype, i, tag, c));
            out.push_back(post_send(offset(from, sd[k], stype), sc[k], stype, i, tag, c));
        }
        if (copy) out.push_back(std::make_shared<keep_alive>(copy));
    });
    return s;
}

schedule_ptr reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type, MPI_Op op,
                            communicator* c) {
    const int size = c->size();
    std::vector<int> displs(static_cast<std::size_t>(size), 0);
    int total = 0;
    for (int i = 0; i < size; ++i) {
        displs[static_cast<std::size_t>(i)] = total;
        total += recvcounts[i];
    }
    auto whole = std::make_shared<typed_buffer>(total, type);
    auto s = reduce(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, whole->base, total, type, op, 0, c);
    auto spread = scatterv(whole->base, recvcounts, displs.data(), type, recvbuf, recvcounts[c->my_rank], type, 0, c);
    s->then(spread);
    s->rounds.push_back([whole](auto&) {});  // keeps the whole result alive to the end
    return s;
}

// A chain through the ranks in order: each combines its predecessors'
// prefix with its own value, so the order of the operands is the ranks'.
schedule_ptr scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, communicator* c,
                  bool exclusive) {
    auto s = std::make_shared<schedule>();
    s->uses_comm = comm_use(c);
    const int size = c->size(), rank = c->my_rank, tag = next_tag(c);
    auto mine = std::make_shared<typed_buffer>(count, type);
    auto prefix = std::make_shared<typed_buffer>(count, type);
    const void* in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    s->rounds.push_back([=](auto& out) {
        copy_data(in, count, type, mine->base, count, type);
        if (rank > 0) out.push_back(post_recv(prefix->base, count, type, rank - 1, tag, c));
    });
    s->rounds.push_back([=](auto& out) {
        if (rank > 0) {
            if (exclusive) copy_data(prefix->base, count, type, recvbuf, count, type);
            PMPI_Reduce_local(prefix->base, mine->base, count, type, op);  // mine = prefix op mine
        }
        if (!exclusive) copy_data(mine->base, count, type, recvbuf, count, type);
        if (rank + 1 < size) out.push_back(post_send(mine->base, count, type, rank + 1, tag, c));
    });
    return s;
}

}  // namespace rampart::replica::detail
