// Collectives inside each replica set (see set_collectives.hpp): the
// program's calls, and the comparison of the sibling replicas' results.

#include "set_collectives.hpp"
#include "significant_bytes.hpp"

#include "communicators.hpp"
#include "datatypes.hpp"
#include "protocol.hpp"
#include "report.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <numeric>

namespace rampart::replica::detail {

namespace {
// An Allreduce gathers every rank's operand: beyond this many bytes in all,
// the library's own reduction moves less.
constexpr std::size_t most_gathered = 256 * 1024;
}  // namespace

set_collectives& set_collectives::get() {
    static auto* s = new set_collectives();  // lives until the process ends, as the protocol does
    return *s;
}

// With three replicas a corrupted result must be outvoted before the
// program sees it, and a spare that re-creates a replica has no place in a
// set's communicator: those jobs use the library's collectives. Every
// process learns the same whether the sets' communicators all came to be.
void set_collectives::start() {
    const protocol& p = protocol::get();
    if (p.where().spares() > 0 || p.where().replicas() > 2) return;
    members_entered_.assign(static_cast<std::size_t>(p.where().processes()), 0);
    on_ = in_set_ = p.net().split_sets(p.replica(), p.rank());
}

bool set_collectives::covers(const communicator* c) const {
    return on_ && c == communicators::get().world() && !protocol::get().replaying();
}

bool set_collectives::barrier() {
    const int n = protocol::get().where().ranks();
    static char nothing = 0;  // every rank's block is empty: no buffer is read or written
    gathering g{"MPI_Barrier", &nothing, &nothing, std::vector<int>(static_cast<std::size_t>(n)),
                std::vector<int>(static_cast<std::size_t>(n))};
    gather(g);
    return true;
}

bool set_collectives::allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 const int* recvcounts, const int* displs, MPI_Datatype recvtype) {
    const protocol& p = protocol::get();
    if (!contiguous(recvtype) || (sendbuf != MPI_IN_PLACE && !contiguous(sendtype))) return false;
    const auto n = static_cast<std::size_t>(p.where().ranks()), me = static_cast<std::size_t>(p.rank());
    const std::size_t size = data_bytes(1, recvtype);
    gathering g{"MPI_Allgatherv", nullptr, static_cast<char*>(recvbuf), std::vector<int>(n), std::vector<int>(n),
                recvtype};
    for (std::size_t r = 0; r < n; ++r) {
        const std::size_t bytes = static_cast<std::size_t>(recvcounts[r]) * size;
        const std::size_t at = static_cast<std::size_t>(displs[r]) * size;
        if (recvcounts[r] < 0 || displs[r] < 0 || bytes > INT_MAX / 2 / n || at > INT_MAX) return false;
        g.bytes[r] = static_cast<int>(bytes);
        g.displs[r] = static_cast<int>(at);
    }
    if (sendbuf == MPI_IN_PLACE)
        g.mine = g.out + g.displs[me];
    else if (sendcount < 0 || data_bytes(sendcount, sendtype) != static_cast<std::size_t>(g.bytes[me]))
        return false;  // the library's collective reports the mismatch
    else
        g.mine = static_cast<const char*>(sendbuf);
    gather(g);
    return true;
}

// The operands combined in the order of the library's reduction (collectives.cpp):
// a binomial tree over blocks of neighbouring ranks, the lower ranks' on the left.
bool set_collectives::allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op) {
    const int n = protocol::get().where().ranks();
    const std::size_t size = data_bytes(count, type);
    if (count <= 0 || !contiguous(type) || size * static_cast<std::size_t>(n) > most_gathered) return false;
    operands_.resize(size * static_cast<std::size_t>(n));
    gathering g{"MPI_Allreduce", static_cast<const char*>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf),
                operands_.data(), std::vector<int>(static_cast<std::size_t>(n), static_cast<int>(size)),
                std::vector<int>(static_cast<std::size_t>(n)), type};
    for (int r = 0; r < n; ++r) g.displs[static_cast<std::size_t>(r)] = r * static_cast<int>(size);
    gather(g);
    std::vector<char*> block(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) block[static_cast<std::size_t>(r)] = g.out + g.displs[static_cast<std::size_t>(r)];
    for (int m = 1; m < n; m <<= 1)
        for (int r = 0; r + m < n; r += 2 * m) {
            const auto left = static_cast<std::size_t>(r), right = static_cast<std::size_t>(r + m);
            PMPI_Reduce_local(block[left], block[right], count, type, op);  // right = left op right
            block[left] = block[right];
        }
    std::memcpy(recvbuf, block[0], size);
    return true;
}

void set_collectives::gather(gathering& g) {
    protocol& p = protocol::get();
    const std::uint64_t index = next_++;
    // The sets stay within `window` collectives of each other, so that a
    // set that must pull finds the blocks still kept by the other.
    p.wait_until([&] { return sibling() < 0 || sibling_results_ + window > index; });
    p.before_send();
    keep_mine(g, index);
    if (!in_set_) tell_members();
    serve_deferred();
    if (!in_set_ || !gather_in_set(g)) pull(g, index);
    done_ = index + 1;
    push_result(g, index);
    // In the place of a dead sibling this process sends to the other set,
    // whose members must have entered this collective first.
    const int other = 1 - p.replica();
    if (p.where().replicas() == 2 && sibling() < 0)
        p.wait_until([&] { return members_entered(other, index); });
    if (sibling() >= 0) {
        std::uint64_t hashes[2] = {chain_, 0};  // each block's hash weighed by its place
        for (std::size_t r = 0; r < g.bytes.size(); ++r)
            hashes[1] ^= hash_significant(g.out + g.displs[r], static_cast<std::size_t>(g.bytes[r]), g.type) * (2 * r + 1);
        chain_ = hash_bytes(hashes, sizeof hashes);
        if (next_ % batch == 0) tell_sibling();
    }
    p.after_send();
}

int set_collectives::sibling() const {
    const protocol& p = protocol::get();
    if (p.where().replicas() != 2) return -1;
    const int q = p.where().process(p.rank(), 1 - p.replica());
    return p.where().dead(q) ? -1 : q;
}

// The hash of every result so far goes to the sibling once per `batch`
// collectives (and at the end). Its answers are taken whenever the protocol
// moves on: while a collective waits, or at the latest when the window is
// full (an empty look at MPI's messages costs a context switch on shared cores).
void set_collectives::tell_sibling() {
    protocol& p = protocol::get();
    const int sibling = this->sibling();
    if (sibling < 0 || next_ == told_) return;
    told_ = next_;
    own_hash_[next_] = chain_;
    p.send_control(sibling, result_tag, next_, chain_);
    compare(next_);
}

void set_collectives::finish() {
    protocol& p = protocol::get();
    if (!on_) return;
    tell_members();  // one that has not yet learnt its set is broken may be waited for
    tell_sibling();
    p.wait_until([&] { return sibling() < 0 || sibling_results_ >= next_; });
}

void set_collectives::compare(std::uint64_t index) {
    const auto own = own_hash_.find(index), theirs = sibling_hash_.find(index);
    if (own == own_hash_.end() || theirs == sibling_hash_.end()) return;
    if (own->second != theirs->second) {
        protocol& p = protocol::get();
        ++p.corruptions_detected;
        report_collective_corruption(p, index);
        p.abort_job(4, "silent data corruption detected: the results of the collectives on MPI_COMM_WORLD up to number " +
                           std::to_string(index - 1) +
                           " differ between the two replicas of rank " + std::to_string(p.rank()) +
                           divergence_causes(p.flipping()));
    }
    own_hash_.erase(own);
    sibling_hash_.erase(theirs);
}

void set_collectives::on_result(int /*from*/, const std::uint64_t* words) {
    sibling_hash_[words[0]] = words[1];
    sibling_results_ = std::max(sibling_results_, words[0]);
    compare(words[0]);
}

}  // namespace rampart::replica::detail
