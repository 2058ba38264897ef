// Collectives inside each replica set (see set_collectives.hpp): pulling
// the blocks of a collective from the live replicas of their ranks once
// this process's set is broken, and serving this process's own blocks to
// those that pull them.

#include "messages_in_flight.hpp"
#include "protocol.hpp"
#include "set_collectives.hpp"

#include <algorithm>
#include <cstring>

namespace rampart::replica::detail {

namespace {
constexpr std::size_t header_words = 3;  // {index, rank, kept}
constexpr std::size_t header_bytes = header_words * sizeof(std::uint64_t);
}  // namespace

// The sibling's result when it sends them (it has begun to, and is not past
// this one), else every other rank's block from its live replicas. A
// sibling whose own set is broken may be pulling the same collective: its
// result is not waited for (it may be waiting for this one's).
void set_collectives::pull(gathering& g, std::uint64_t index) {
    protocol& p = protocol::get();
    ++gathered_by_pulling;
    p.wait_until([&] {
        return pushed_.count(index) || sibling() < 0 || pushing_ || pushed_next_ == 0 || pushed_next_ > index;
    });
    if (take_pushed(g, index)) return;
    const int n = p.where().ranks();
    const auto me = static_cast<std::size_t>(p.rank());
    char* own = g.out + g.displs[me];
    if (g.bytes[me] > 0 && own != sent_) std::memcpy(own, sent_, static_cast<std::size_t>(g.bytes[me]));
    pulling_ = &g;
    pulling_index_ = index;
    have_.assign(static_cast<std::size_t>(n), 0);
    have_[me] = 1;
    asked_.assign(static_cast<std::size_t>(n), {});
    for (int r = 0; r < n; ++r)
        if (!have_[static_cast<std::size_t>(r)]) ask(r, index);
    p.wait_until([&] { return pulled() || pushed_.count(index); });
    pulling_ = nullptr;
    if (!pulled()) take_pushed(g, index);
    p.wait_until([&] { return members_entered(p.replica(), index); });
}

// How many collectives this process has entered, to every process that
// sends to it for another rank: the live members of its set, and for a
// dead member, the live replicas of that rank, which send in its place.
void set_collectives::tell_members() {
    protocol& p = protocol::get();
    for (int r = 0; r < p.where().ranks(); ++r) {
        if (r == p.rank()) continue;
        const int member = p.where().process(r, p.replica());
        for (int k = 0; k < p.where().replicas(); ++k) {
            const int q = p.where().process(r, k);
            if ((q == member || p.where().dead(member)) && !p.where().dead(q))
                p.send_control(q, entered_tag, entered_);
        }
    }
}

// Whether every live member of set `replica` (but this process) has
// entered collective `index`.
bool set_collectives::members_entered(int replica, std::uint64_t index) const {
    const protocol& p = protocol::get();
    for (int r = 0; r < p.where().ranks(); ++r) {
        const int q = p.where().process(r, replica);
        if (q != p.process() && !p.where().dead(q) && members_entered_[static_cast<std::size_t>(q)] <= index)
            return false;
    }
    return true;
}

void set_collectives::on_entered(int from, std::uint64_t count) {
    auto& entered = members_entered_[static_cast<std::size_t>(from)];
    entered = std::max(entered, count);
}

bool set_collectives::pulled() const {
    return std::all_of(have_.begin(), have_.end(), [](char h) { return h != 0; });
}

// Every rank's block, in rank order, after the index.
void set_collectives::push_result(const gathering& g, std::uint64_t index) {
    const int sibling = this->sibling();
    if (!pushing_ || sibling < 0) return;
    block_send& s = serving_.emplace_back();
    s.bytes.resize(sizeof index);
    std::memcpy(s.bytes.data(), &index, sizeof index);
    for (std::size_t r = 0; r < g.bytes.size(); ++r)
        s.bytes.insert(s.bytes.end(), g.out + g.displs[r], g.out + g.displs[r] + g.bytes[r]);
    send_last(sibling, pushed_result_tag);
}

// The bytes of the last of `serving_` go to `to`; a dead receiver needs nothing.
void set_collectives::send_last(int to, int tag) {
    block_send& s = serving_.back();
    if (protocol::get().net().isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, to, tag, false,
                   &s.request) != MPI_SUCCESS)
        serving_.pop_back();
}

bool set_collectives::take_pushed(gathering& g, std::uint64_t index) {
    const auto it = pushed_.find(index);
    if (it == pushed_.end()) return false;
    const std::vector<char>& bytes = it->second;
    std::size_t at = sizeof index;
    for (std::size_t r = 0; r < g.bytes.size(); ++r) {
        const auto b = static_cast<std::size_t>(g.bytes[r]);
        if (at + b > bytes.size())
            protocol::get().abort_job(3, "the sibling's result of collective " + std::to_string(index) + " (" +
                                             g.name + ") has " + std::to_string(bytes.size() - sizeof index) +
                                             " bytes, fewer than this process expects");
        if (b > 0) std::memcpy(g.out + g.displs[r], bytes.data() + at, b);
        at += b;
    }
    pushed_.erase(pushed_.begin(), std::next(it));
    return true;
}

void set_collectives::on_pushed(MPI_Message msg, const MPI_Status& st) {
    std::vector<char> got = receive_whole(protocol::get().net(), &msg, st);
    std::uint64_t index = 0;
    if (got.size() < sizeof index)
        protocol::get().abort_job(3, "malformed result from process " + std::to_string(st.MPI_SOURCE));
    std::memcpy(&index, got.data(), sizeof index);
    pushed_next_ = std::max(pushed_next_, index + 1);
    if (index >= done_) pushed_[index] = std::move(got);
}

// Every live replica of the rank is asked; the first answer is taken.
void set_collectives::ask(int rank, std::uint64_t index) {
    protocol& p = protocol::get();
    auto& asked = asked_[static_cast<std::size_t>(rank)];
    for (int k = 0; k < p.where().replicas(); ++k) {
        const int q = p.where().process(rank, k);
        if (q == p.process() || p.where().dead(q) || std::find(asked.begin(), asked.end(), q) != asked.end())
            continue;
        p.send_control(q, block_request_tag, index, static_cast<std::uint64_t>(rank));
        asked.push_back(q);
    }
    if (asked.empty()) kept_nowhere(static_cast<std::size_t>(rank), index);
}

void set_collectives::kept_nowhere(std::size_t rank, std::uint64_t index) {
    protocol::get().abort_job(3, "no live replica of rank " + std::to_string(rank) +
                                     " keeps its block of collective " + std::to_string(index) + " on MPI_COMM_WORLD");
}

void set_collectives::on_request(int from, const std::uint64_t* words) {
    const protocol& p = protocol::get();
    if (words[1] != static_cast<std::uint64_t>(p.rank()) || !on_) {
        protocol::get().abort_job(3, "a collective's block of rank " + std::to_string(words[1]) +
                                         " asked of process " + std::to_string(p.process()));
    }
    if (words[0] < entered_)
        serve(from, words[0]);
    else
        deferred_.emplace_back(from, words[0]);
}

void set_collectives::serve_deferred() {
    auto later = std::partition(deferred_.begin(), deferred_.end(), [&](const auto& d) { return d.second >= entered_; });
    for (auto it = later; it != deferred_.end(); ++it) serve(it->first, it->second);
    deferred_.erase(later, deferred_.end());
}

// The block, or word `kept` 0 when it is no longer kept here.
void set_collectives::serve(int to, std::uint64_t index) {
    const protocol& p = protocol::get();
    const kept_block& k = mine_[index % kept];
    const bool have = k.index == index;
    block_send& s = serving_.emplace_back();
    const std::uint64_t header[header_words] = {index, static_cast<std::uint64_t>(p.rank()), have ? 1u : 0u};
    const std::size_t block = have ? k.size : 0;
    s.bytes.resize(header_bytes + block);
    std::memcpy(s.bytes.data(), header, header_bytes);
    if (block > 0) std::memcpy(s.bytes.data() + header_bytes, k.data.get(), block);
    send_last(to, block_tag);
}

bool set_collectives::progress() { return drop_finished(protocol::get().net(), serving_); }

void set_collectives::on_block(MPI_Message msg, const MPI_Status& st) {
    const std::vector<char> got = receive_whole(protocol::get().net(), &msg, st);
    protocol& p = protocol::get();
    if (got.size() < header_bytes) p.abort_job(3, "malformed block from process " + std::to_string(st.MPI_SOURCE));
    std::uint64_t header[header_words];
    std::memcpy(header, got.data(), header_bytes);
    const auto rank = static_cast<std::size_t>(header[1]);
    if (!pulling_ || header[0] != pulling_index_ || rank >= have_.size() || have_[rank]) return;  // answered before
    auto& asked = asked_[rank];
    if (!header[2]) {
        asked.erase(std::remove(asked.begin(), asked.end(), st.MPI_SOURCE), asked.end());
        if (asked.empty()) kept_nowhere(rank, header[0]);
        return;
    }
    if (got.size() - header_bytes != static_cast<std::size_t>(pulling_->bytes[rank]))
        p.abort_job(3, "rank " + std::to_string(rank) + " gave " + std::to_string(got.size() - header_bytes) +
                           " bytes to collective " + std::to_string(header[0]) + " (" + pulling_->name +
                           ") where rank " + std::to_string(p.rank()) + " expects " +
                           std::to_string(pulling_->bytes[rank]));
    if (got.size() > header_bytes)
        std::memcpy(pulling_->out + pulling_->displs[rank], got.data() + header_bytes, got.size() - header_bytes);
    have_[rank] = 1;
}

// A member of this set died: the set is broken. A replica asked for a block
// died: the block is asked of the rank's other live replicas.
void set_collectives::on_death(int process) {
    const protocol& p = protocol::get();
    if (!on_) return;
    if (p.where().replica_of(process) != p.replica()) {
        if (p.where().replicas() == 2) pushing_ = true;  // the sibling's set is broken
    } else if (in_set_) {
        leave_set();
    } else {
        tell_members();  // the dead member's replicas now send in its place: they wait for this one too
    }
    if (p.where().rank_of(process) == p.rank()) {  // the sibling: nothing more to compare with
        own_hash_.clear();
        sibling_hash_.clear();
    }
    if (!pulling_) return;
    for (std::size_t r = 0; r < asked_.size(); ++r) {
        auto& asked = asked_[r];
        if (have_[r] || std::find(asked.begin(), asked.end(), process) == asked.end()) continue;
        asked.erase(std::remove(asked.begin(), asked.end(), process), asked.end());
        if (asked.empty()) ask(static_cast<int>(r), pulling_index_);
    }
}

}  // namespace rampart::replica::detail
