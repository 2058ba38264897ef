// Receiving: every message is taken from MPI by a matched probe, so that
// the protocol decides what it is (a control, a duplicate, a message from
// a process that is not yet this rank's source) before any buffer is given
// for it. Data are then matched to the program's receives by MPI's own
// rules: posted receives in posting order, unexpected messages in order of
// arrival.

#include "protocol.hpp"

#include "communicators.hpp"
#include "datatypes.hpp"
#include "report.hpp"
#include "set_collectives.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace rampart::replica::detail {

namespace {
int app_tag_of(int tag) { return tag & max_app_tag; }
int context_of(int tag) { return (tag >> app_tag_bits) & (max_contexts - 1); }
}  // namespace

bool protocol::matches(const recv_request& r, const inbound& in) const { return matches(r, in.source, in.tag); }

bool protocol::matches(const recv_request& r, int source, int tag) const {
    if (context_of(tag) != r.context) return false;
    if (r.tag != MPI_ANY_TAG && r.tag != app_tag_of(tag)) return false;
    if (r.source == MPI_ANY_SOURCE) return r.comm->rank_of(source) >= 0;
    return r.comm->ranks[static_cast<std::size_t>(r.source)] == source;
}

void protocol::fill_status(MPI_Status& st, const inbound& in, const communicator* comm) const {
    st.MPI_SOURCE = comm->rank_of(in.source);
    st.MPI_TAG = app_tag_of(in.tag);
    st.MPI_ERROR = MPI_SUCCESS;
    PMPI_Status_set_elements_x(&st, MPI_BYTE, static_cast<MPI_Count>(in.bytes));
    PMPI_Status_set_cancelled(&st, 0);
}

// One message per call. A probe that finds nothing lets MPI yield the core
// (it does at every empty poll when a job has more processes than cores):
// probing again after a message would put a context switch between its
// arrival and the program's wait seeing it.
bool protocol::poll_world() {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    const int rc = net_->improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, &flag, &msg, &st);
    if (rc != MPI_SUCCESS) return check_failures(rc);
    if (flag) on_message(msg, st);
    return flag != 0;
}

void protocol::on_message(MPI_Message msg, const MPI_Status& st) {
    const int from = st.MPI_SOURCE;
    if (st.MPI_TAG < control_tag_base) return on_data(from, msg, st);
    if (st.MPI_TAG == abort_tag) on_abort(msg, st);
    if (st.MPI_TAG == state_tag) return on_state(msg, st);
    if (st.MPI_TAG == block_tag) return set_collectives::get().on_block(msg, st);
    if (st.MPI_TAG == pushed_result_tag) return set_collectives::get().on_pushed(msg, st);
    if (st.MPI_TAG == printed_tag) {
        net_->mrecv(nullptr, 0, MPI_BYTE, &msg);
        printed_seen_ = 1;
        return;
    }
    std::uint64_t words[3] = {0, 0, 0};
    const int count = net_->count(st, MPI_UINT64_T);
    if (count != 3) {
        std::vector<char> junk(1 << 16);
        net_->mrecv(junk.data(), static_cast<int>(junk.size()), MPI_BYTE, &msg);
        abort_job(3, "malformed control message from process " + std::to_string(from));
    }
    net_->mrecv(words, 3, MPI_UINT64_T, &msg);
    switch (st.MPI_TAG) {
        case ack_tag:
            return apply_ack(from, words[0], words[1]);
        case start_tag: {
            const int rank = layout_.rank_of(from);
            if (rank >= 0 && source_process_[static_cast<std::size_t>(rank)] != from)
                return stash_control(from, words[0]);
            next_from_[static_cast<std::size_t>(from)] = words[0];
            numbered_[static_cast<std::size_t>(from)] = 1;
            return;
        }
        case die_tag:
            die();
        case done_tag:
            done_from_[static_cast<std::size_t>(from)] = 1;
            return;
        case vote_tag:
            return on_vote(from, words[0], words[1], words[2]);
        case result_tag:
            return set_collectives::get().on_result(from, words);
        case block_request_tag:
            return set_collectives::get().on_request(from, words);
        case entered_tag:
            return set_collectives::get().on_entered(from, words[0]);
        case entered_with_tag:
            return order_.on_report(from, words[0]);
        case matched_tag:
            return apply_matched(from, words[0]);
        case query_tag:
        case synced_tag:
        case decide_tag:
        case arrived_tag:
        case go_tag:
        case joined_tag:
        case abandon_tag:
            return on_recreation_control(from, st.MPI_TAG, words);
        default:
            abort_job(3, "unknown control message (tag " + std::to_string(st.MPI_TAG) + ")");
    }
}

void protocol::on_data(int from, MPI_Message msg, const MPI_Status& st) {
    const int rank = layout_.rank_of(from);
    const int bytes = net_->count(st, MPI_BYTE);
    if (rank < 0) abort_job(3, "a data message from spare process " + std::to_string(from));
    if (source_process_[static_cast<std::size_t>(rank)] != from) {
        // Sent for a replica that this process does not yet know is dead:
        // kept, in order, until it does.
        stashed& s = stash_[static_cast<std::size_t>(from)].emplace_back();
        s.tag = st.MPI_TAG;
        s.bytes.resize(static_cast<std::size_t>(bytes));
        net_->mrecv(s.bytes.data(), bytes, MPI_BYTE, &msg);
        return;
    }
    if (!numbered_[static_cast<std::size_t>(from)])
        abort_job(3, "a message from process " + std::to_string(from) + " before its start");
    const std::uint64_t number = next_from_[static_cast<std::size_t>(from)]++;
    accept_data(from, number, &msg, st.MPI_TAG, static_cast<std::size_t>(bytes), nullptr);
}

void protocol::stash_control(int from, std::uint64_t number) {
    stashed& s = stash_[static_cast<std::size_t>(from)].emplace_back();
    s.is_start = true;
    s.start = number;
}

// Process `from` became the source of its rank's messages here: what it
// sent before, in order.
void protocol::replay_stash(int from) {
    auto& queue = stash_[static_cast<std::size_t>(from)];
    while (!queue.empty()) {
        stashed s = std::move(queue.front());
        queue.pop_front();
        if (s.is_start) {
            next_from_[static_cast<std::size_t>(from)] = s.start;
            numbered_[static_cast<std::size_t>(from)] = 1;
            continue;
        }
        if (!numbered_[static_cast<std::size_t>(from)])
            abort_job(3, "a message from process " + std::to_string(from) + " before its start");
        const std::uint64_t number = next_from_[static_cast<std::size_t>(from)]++;
        accept_data(from, number, nullptr, s.tag, s.bytes.size(), &s.bytes);
    }
}

// Message `number` of the stream from `from`'s rank: new, a duplicate of
// one received already, or one whose first copy was lost with its sender.
// Either `msg` is still to be received, or `bytes_here` holds it.
void protocol::accept_data(int from, std::uint64_t number, MPI_Message* msg, int tag, std::size_t bytes,
                           std::vector<char>* bytes_here) {
    const int rank = layout_.rank_of(from);
    auto& holes = holes_[static_cast<std::size_t>(rank)];
    std::uint64_t& expected = next_expected_[static_cast<std::size_t>(rank)];
    std::shared_ptr<inbound> in;
    if (auto h = holes.find(number); h != holes.end()) {
        in = h->second;
        holes.erase(h);
    } else if (number < expected) {
        ++duplicates_dropped;
        if (msg) {
            std::vector<char> junk(bytes);
            net_->mrecv(junk.data(), static_cast<int>(bytes), MPI_BYTE, msg);
        }
        return;
    } else if (number > expected) {
        abort_job(3, "message " + std::to_string(number) + " from rank " + std::to_string(rank) +
                         " came before message " + std::to_string(expected) +
                         (layout_.spare(process_) ? " at a re-created replica of rank " + std::to_string(rank_) +
                                                        ": a message crossed rampart_replica_sync() (sent before "
                                                        "it, received after it)"
                                                  : std::string()));
    } else {
        ++expected;
        in = std::make_shared<inbound>();
        in->source = rank;
        in->number = number;
        in->tag = tag;
        in->bytes = bytes;
        if (auto r = match_posted(rank, tag)) {
            in->target = r;
            r->matched = in;
        } else {
            unexpected_.push_back(in);
        }
    }
    in->source_process = from;
    in->s = inbound::state::receiving;
    receive(in, msg, bytes_here);
    if (in->s == inbound::state::receiving) receiving_.push_back(in);
}

// Into the matched receive's own memory when it fits, else into a buffer.
void protocol::receive(const std::shared_ptr<inbound>& shared, MPI_Message* msg, std::vector<char>* bytes_here) {
    inbound& in = *shared;
    const recv_request* t = in.target.get();
    in.direct = t && data_bytes(t->count, t->type) >= in.bytes;
    if (bytes_here) {
        if (in.direct)
            unpack(*bytes_here, in.bytes, t->buf, t->count, t->type);
        else
            in.buffer = std::move(*bytes_here);
        received(shared);
        return;
    }
    int rc;
    if (in.direct) {
        rc = net_->imrecv(t->buf, t->count, t->type, msg, &in.request);
    } else {
        in.buffer.resize(in.bytes);
        rc = net_->imrecv(in.buffer.data(), static_cast<int>(in.bytes), MPI_BYTE, msg, &in.request);
    }
    // A small message has arrived whole (MPI's eager protocol): it is
    // taken now, which a program waiting for it sees at once.
    int arrived = 0;
    if (rc == MPI_SUCCESS && in.bytes <= small_message) rc = net_->test(&in.request, &arrived);
    if (rc != MPI_SUCCESS)
        lost_in_flight(shared, rc);
    else if (arrived)
        received(shared);
}

bool protocol::test_inbound() {
    bool any = false;
    for (auto it = receiving_.begin(); it != receiving_.end();) {
        inbound& in = **it;
        int flag = 0;
        const int rc =
            in.s == inbound::state::receiving ? net_->test(&in.request, &flag) : MPI_SUCCESS;
        if (in.s == inbound::state::receiving && rc == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        any = true;
        std::shared_ptr<inbound> keep = *it;
        it = receiving_.erase(it);
        if (keep->s != inbound::state::receiving) continue;  // settled meanwhile
        if (rc != MPI_SUCCESS)
            lost_in_flight(keep, rc);
        else
            received(keep);
    }
    return any;
}

// Its sender died while it travelled: the rank's next source sends it again.
// The hole is made before MPI is asked for deaths: learning that its sender
// died replays at once what the rank's next source sent, this message among
// it, which is dropped as a duplicate unless the hole is there to take it.
void protocol::lost_in_flight(const std::shared_ptr<inbound>& in, int rc) {
    const int from = in->source_process;
    in->request = MPI_REQUEST_NULL;
    in->s = inbound::state::hole;
    holes_[static_cast<std::size_t>(in->source)][in->number] = in;
    if (!layout_.dead(from)) check_failures(rc);
    if (!layout_.dead(from)) abort_job(3, "receiving from process " + std::to_string(from) + " failed");
}

void protocol::received(const std::shared_ptr<inbound>& shared) {
    inbound& in = *shared;
    in.request = MPI_REQUEST_NULL;
    in.s = inbound::state::complete;
    // With one replica no one compares what was received.
    const bool compared = layout_.replicas() > 1 || noting_;
    const std::uint64_t hash = !compared ? 0
                               : in.direct ? hash_data(in.target->buf, in.target->count, in.target->type, in.bytes)
                                           : hash_bytes(in.buffer.data(), in.bytes);
    for (int l = 0; l < layout_.replicas(); ++l) {
        const int p = layout_.process(in.source, l);
        if (p != in.source_process && !layout_.dead(p)) send_control(p, ack_tag, in.number, hash);
    }
    if (noting_) noted_.push_back({in.source, in.number, hash});
    vote_on(shared, hash);
}

void protocol::deliver(inbound& in) {
    recv_request& r = *in.target;
    const std::size_t capacity = data_bytes(r.count, r.type);
    if (!in.direct) unpack(in.buffer, std::min(capacity, in.bytes), r.buf, r.count, r.type);
    fill_status(r.status, in, r.comm);
    if (in.bytes > capacity) r.status.MPI_ERROR = MPI_ERR_TRUNCATE;
    if (in.tag & synchronous_bit) tell_matched(in);
    if (logging_) log_delivery(in);
    in.buffer = {};
    r.matched = nullptr;
    r.complete = true;
}

std::shared_ptr<recv_request> protocol::match_posted(int source, int tag) {
    for (auto it = posted_.begin(); it != posted_.end(); ++it)
        if (matches(**it, source, tag)) {
            std::shared_ptr<recv_request> r = *it;
            posted_.erase(it);
            return r;
        }
    return nullptr;
}

std::shared_ptr<inbound> protocol::match_unexpected(const recv_request& r) {
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it)
        if (matches(r, **it)) {
            std::shared_ptr<inbound> in = *it;
            unexpected_.erase(it);
            return in;
        }
    return nullptr;
}

}  // namespace rampart::replica::detail
