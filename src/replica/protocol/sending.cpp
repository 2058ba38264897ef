// Sending: the copies of a message, the acknowledgements that confirm the
// copies other replicas sent, the comparison of what each replica sent, and
// taking over the sending of a dead replica of this rank.

#include "protocol.hpp"
#include "significant_bytes.hpp"

#include "datatypes.hpp"
#include "messages_in_flight.hpp"
#include "report.hpp"
#include "set_collectives.hpp"

#include <signal.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>

namespace rampart::replica::detail {

namespace {
// A small message (protocol.hpp) is copied and its send completes at once, as MPI's
// eager sends do: the sender does not wait for the acknowledgements of the
// other replicas of the receiver (which, on shared cores, would cost a
// context switch per message). At most `buffered_count` copies wait for
// their confirmation; beyond that sends wait. The bound keeps the memory
// small and bounds how far one set of replicas runs ahead of another (a
// copy is confirmed once the sibling's copy has arrived): a re-creation
// waits less for the set behind to reach its sync, and the program's own
// timings, printed by the replicas ahead, stay close to the job's. The
// bound counts messages, so how far apart that is in time depends on the
// program's message rate.
constexpr std::size_t buffered_count = 128;
}  // namespace

void protocol::prepare_payload(send_op& op, same_data* same) {
    const std::size_t bytes = data_bytes(op.count, op.type);
    // A synchronous send waits for its receiver's program (synchronous_sends.cpp)
    // and, to another rank, for the other replicas' copies. To this rank
    // itself it is copied and waits only for this process's program: the
    // rank's other replicas take it at their own pace, and a program that
    // tests such a send would otherwise see it complete at different
    // points on its replicas.
    // With one replica nothing waits for other copies, and nothing is
    // compared: the message is the program's, as MPI would send it.
    const bool compared = layout_.replicas() > 1;
    op.buffered = bytes <= small_message && (op.synchronous ? op.dest == rank_ : compared);
    // One replica's outgoing copies are corrupted on purpose: a bit flipped
    // in a copy of the payload, which is what that replica then believes
    // it sent.
    const bool flip = flip_now(bytes);
    // Data with bytes that hold no value (long double's) is sent as a copy
    // with those bytes zeroed, so that every replica sends the same bytes.
    const bool holes = compared && !holes_of(op.type).empty();
    if (!op.buffered && !flip && !holes) return;  // hashed by route(), once its copies are on their way
    if (op.buffered) {
        wait_until([&] { return buffered_messages_ < buffered_count; });
        ++buffered_messages_;
    }
    if (!flip && same && same->bytes && same->of(op.buf, op.count, op.type)) {
        op.payload = same->bytes;
        op.hash = same->hash;
        return;
    }
    auto copy = std::make_shared<std::vector<char>>(
        contiguous(op.type) ? std::vector<char>(static_cast<const char*>(op.buf), static_cast<const char*>(op.buf) + bytes)
                            : pack(op.buf, op.count, op.type));
    clear_holes(copy->data(), copy->size(), op.type);
    if (flip) flip_one(*copy, op.type);
    op.hash = hash_bytes(copy->data(), copy->size());
    op.payload = std::move(copy);
    if (same && !flip) *same = same_data{op.buf, op.count, op.type, op.payload, op.hash, true};
}

bool protocol::flip_now(std::size_t bytes) {
    return flip_rate_ > 0.0 && replica_ == 0 && bytes > 0 && bytes <= INT_MAX &&
           std::uniform_real_distribution<double>(0.0, 1.0)(flip_random_) < flip_rate_;
}

// A bit of a byte that holds a value: one flipped in a long double's unused
// bytes would change nothing the program can see.
void protocol::flip_one(std::vector<char>& bytes, MPI_Datatype type) {
    const auto& holes = holes_of(type);
    const std::size_t element = holes.empty() ? 1 : data_bytes(1, type);
    auto in_hole = [&](std::uint64_t byte) {
        const std::size_t at = element > 0 ? byte % element : 0;
        for (const hole& h : holes)
            if (at >= h.at && at < h.at + h.bytes) return true;
        return false;
    };
    std::uint64_t bit = 0;
    do {
        bit = std::uniform_int_distribution<std::uint64_t>(0, bytes.size() * 8 - 1)(flip_random_);
    } while (in_hole(bit / 8));
    bytes[bit / 8] = static_cast<char>(bytes[bit / 8] ^ (1 << (bit % 8)));
    ++bits_flipped;
}

// The copies of a new message: sent by this process where it is
// responsible, else awaited as acknowledgements. An acknowledgement that
// came first (a replica ahead) confirms its copy, which then is not sent
// (after a take-over, the dead replica had delivered it). A send may learn
// of deaths, whose take-overs start copies of this message: each copy is
// started once. A large message is hashed while its copies travel: MPI
// moves a large message only inside its calls, so it is called between
// pieces of the hash.
void protocol::route(const std::shared_ptr<send_op>& op, same_data* same) {
    auto& early = early_acks_[static_cast<std::size_t>(op->dest)];
    for (int k = 0; k < layout_.replicas(); ++k) {
        send_op::copy& c = op->to[static_cast<std::size_t>(k)];
        const auto it = early.find({op->number, k});
        if (!layout_.alive(op->dest, k)) {
            c.s = send_op::state::not_needed;
        } else if (it != early.end()) {
            c.s = send_op::state::acked;
            c.hash = it->second;
            c.hash_known = true;
        }
        if (it != early.end()) early.erase(it);
    }
    for (int k = 0; k < layout_.replicas(); ++k)
        if (op->to[static_cast<std::size_t>(k)].s == send_op::state::awaiting_ack &&
            layout_.responsible(rank_, k) == replica_)
            send_or_hold(op, k);
    if (!op->payload && layout_.replicas() > 1) {
        op->hash = same && same->of(op->buf, op->count, op->type)
                       ? same->hash
                       : hash_data_in_pieces(op->buf, op->count, op->type, data_bytes(op->count, op->type),
                                             [](void* net) {
                                                 int flag = 0;  // a probe for nothing: MPI progresses the transfers
                                                 static_cast<transport*>(net)->iprobe(MPI_ANY_SOURCE, progress_tag,
                                                                                      &flag, MPI_STATUS_IGNORE);
                                             },
                                             net_);
        for (send_op::copy& c : op->to)
            if (c.s == send_op::state::sending || c.s == send_op::state::sent) c.hash = op->hash;
        if (same) *same = same_data{op->buf, op->count, op->type, nullptr, op->hash, true};
    }
    for (int k = 0; k < layout_.replicas(); ++k)
        if (op->to[static_cast<std::size_t>(k)].s == send_op::state::acked) check_copy_hash(*op, k);
}

// Sends this process's copy of `op` to replica k of its destination. The
// copies on one channel carry consecutive numbers unless a start control
// says where they resume (after a take-over, or after copies that replica
// already has).
void protocol::start_copy(const std::shared_ptr<send_op>& op, int k) {
    const int p = layout_.process(op->dest, k);
    const auto pi = static_cast<std::size_t>(p);
    if (!channel_numbered_[pi] || channel_next_[pi] != op->number) send_control(p, start_tag, op->number);
    channel_numbered_[pi] = 1;
    channel_next_[pi] = op->number + 1;
    send_op::copy& c = op->to[static_cast<std::size_t>(k)];
    assert(c.request == MPI_REQUEST_NULL && "each copy is started once");
    const void* data = op->payload ? op->payload->data() : op->buf;
    const int count = op->payload ? static_cast<int>(op->payload->size()) : op->count;
    const MPI_Datatype type = op->payload ? MPI_BYTE : op->type;
    const int rc = net_->isend(data, count, type, p, op->tag, op->synchronous, &c.request);
    c.s = send_op::state::sending;
    c.hash = op->hash;
    c.hash_known = true;
    // A small copy has mostly left within the call (MPI's eager send): then
    // it needs no further test.
    int left = 0;
    const bool small = data_bytes(count, type) <= small_message;  // a buffered copy is small
    const int tested = rc == MPI_SUCCESS && small ? net_->test(&c.request, &left) : rc;
    if (tested != MPI_SUCCESS) {
        c.request = MPI_REQUEST_NULL;
        check_failures(tested);
        c.s = layout_.dead(p) ? send_op::state::not_needed : send_op::state::sent;
        if (!layout_.dead(p)) op->error = tested;
        return;
    }
    if (left) {
        c.s = send_op::state::sent;
        return;
    }
    sending_.push_back(op);
}

bool protocol::test_sends() {
    bool any = false;
    for (auto it = sending_.begin(); it != sending_.end();) {
        send_op& op = **it;
        bool in_flight = false;
        for (std::size_t k = 0; k < op.to.size(); ++k) {
            send_op::copy& c = op.to[k];
            if (c.request == MPI_REQUEST_NULL) continue;
            int flag = 0;
            const int rc = net_->test(&c.request, &flag);
            if (rc != MPI_SUCCESS) {
                c.request = MPI_REQUEST_NULL;
                check_failures(rc);
                if (!layout_.dead(layout_.process(op.dest, static_cast<int>(k)))) op.error = rc;
            } else if (!flag) {
                in_flight = true;
                continue;
            }
            any = true;
            if (c.s == send_op::state::sending) c.s = send_op::state::sent;
        }
        if (in_flight) {
            ++it;
            continue;
        }
        std::shared_ptr<send_op> keep = *it;
        it = sending_.erase(it);
        finish(*keep);
    }
    return any;
}

// An acknowledgement from a replica of one of this rank's destinations: it
// has message `number` of this rank's stream, with that hash.
void protocol::apply_ack(int from, std::uint64_t number, std::uint64_t hash) {
    ++acks_received;
    const int j = layout_.rank_of(from), k = layout_.replica_of(from);
    if (j < 0) return;
    std::shared_ptr<send_op> op = pending_[static_cast<std::size_t>(j)].find(number);
    if (!op) {
        // Ahead of this replica: kept until it sends the message itself.
        if (number >= next_number_[static_cast<std::size_t>(j)])
            early_acks_[static_cast<std::size_t>(j)][{number, k}] = hash;
        return;
    }
    send_op::copy& c = op->to[static_cast<std::size_t>(k)];
    if (c.s == send_op::state::awaiting_ack) c.s = send_op::state::acked;
    if (c.s != send_op::state::sending && c.s != send_op::state::sent) {
        c.hash = hash;
        c.hash_known = true;
    }
    check_copy_hash(*op, k);
    finish(*op);
}

// With two replicas a difference cannot be outvoted: the job stops.
void protocol::check_copy_hash(send_op& op, int k) {
    const send_op::copy& c = op.to[static_cast<std::size_t>(k)];
    if (!c.hash_known || c.hash == op.hash || layout_.replicas() >= 3) return;
    ++corruptions_detected;
    report_corruption(*this, op, k);
    abort_job(4, "silent data corruption detected: message " + std::to_string(op.number) + " from rank " +
                     std::to_string(rank_) + " to rank " + std::to_string(op.dest) + " (tag " +
                     std::to_string(op.app_tag) + ", " + std::to_string(data_bytes(op.count, op.type)) +
                     " bytes) differs between replica " + std::to_string(replica_) + " and replica " +
                     std::to_string(k) + " of the sender" + divergence_causes(flip_rate_ > 0.0));
}

void protocol::finish(send_op& op) {
    if (op.complete) return;
    for (const send_op::copy& c : op.to)
        if (c.s == send_op::state::awaiting_ack || c.s == send_op::state::sending) return;
    op.complete = true;
    if (op.buffered) {
        --buffered_messages_;
        op.payload.reset();
    }
    if (layout_.replicas() >= 3) decide_corruption(op);
    pending_[static_cast<std::size_t>(op.dest)].erase(op.number);
}

// Three or more replicas: every copy's hash is known once the message is
// confirmed. A copy outvoted by the others came from a corrupted sender: it
// dies, and is recovered from as a crash (its receiver, outvoted by its
// siblings, dies before using the copy: votes.cpp).
void protocol::decide_corruption(send_op& op) {
    std::map<std::uint64_t, int> votes;
    int known = 0;
    for (const send_op::copy& c : op.to)
        if (c.hash_known && c.s != send_op::state::not_needed) {
            ++votes[c.hash];
            ++known;
        }
    if (votes.size() <= 1) return;
    ++corruptions_detected;
    const auto best =
        std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (2 * best->second <= known)
        abort_job(4, "silent data corruption detected and not correctable (no majority): message " +
                         std::to_string(op.number) + " from rank " + std::to_string(rank_) + " to rank " +
                         std::to_string(op.dest) + " (tag " + std::to_string(op.app_tag) + ")" +
                         divergence_causes(flip_rate_ > 0.0));
    bool self = false;
    for (std::size_t k = 0; k < op.to.size(); ++k) {
        const send_op::copy& c = op.to[k];
        if (!c.hash_known || c.s == send_op::state::not_needed || c.hash == best->first) continue;
        const int sender = layout_.responsible(rank_, static_cast<int>(k));
        if (sender == replica_)
            self = true;
        else if (sender >= 0)
            send_control(layout_.process(rank_, sender), die_tag, 0);
    }
    report_corruption(*this, op, -1);
    if (self) die();
}

void protocol::die() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (!controls_.empty() && std::chrono::steady_clock::now() < deadline) test_controls();
    report_end(*this, "outvoted", 0);
    die_by_order(process_, "outvoted");
}

// Replica k of this rank died and this process sends for it now: every
// message it may not have delivered goes to its receivers again (they drop
// what they have).
void protocol::take_over(int k) {
    for (int j = 0; j < layout_.ranks(); ++j) {
        if (!layout_.alive(j, k)) continue;
        // A copy (k's start) goes out below for each: copy the list first.
        std::vector<std::shared_ptr<send_op>> ops;
        pending_[static_cast<std::size_t>(j)].for_each([&](const std::shared_ptr<send_op>& op) {
            if (op->to[static_cast<std::size_t>(k)].s == send_op::state::awaiting_ack) ops.push_back(op);
        });
        for (auto& op : ops) {
            // A send below that learns of another death completes what that
            // death settles (its copy then freed): not sent again.
            if (op->complete || op->to[static_cast<std::size_t>(k)].s != send_op::state::awaiting_ack) continue;
            send_or_hold(op, k);
            ++resent;
        }
    }
}

void protocol::send_control(int process, int tag, std::uint64_t a, std::uint64_t b, std::uint64_t c3) {
    control_send& c = controls_.emplace_back();
    c.words[0] = a;
    c.words[1] = b;
    c.words[2] = c3;
    if (net_->isend(c.words, 3, MPI_UINT64_T, process, tag, false, &c.request) != MPI_SUCCESS)
        controls_.pop_back();  // a dead peer: nothing to tell it
    if (tag == ack_tag) ++acks_sent;
}

bool protocol::test_controls() { return drop_finished(*net_, controls_); }

// A copy to the other replica set, which this process sends in the place
// of its dead sibling: a message sent after a collective may reach a
// receiver there only once it has entered that collective, or a receive
// from any source inside an earlier phase of the program could take it
// (may_send_copy, collective_order.cpp).
// Copies to one process keep their order: behind a held one, all wait.
void protocol::send_or_hold(const std::shared_ptr<send_op>& op, int k) {
    const int p = layout_.process(op->dest, k);
    const bool behind = std::any_of(held_.begin(), held_.end(),
                                    [&](const auto& h) { return layout_.process(h.first->dest, h.second) == p; });
    if (k != replica_ && (behind || !may_send_copy(*op, p))) {
        held_.emplace_back(op, k);
        return;
    }
    start_copy(op, k);
}

bool protocol::release_held() {
    bool any = false;
    std::vector<int> blocked;  // processes with an earlier copy still held
    for (auto it = held_.begin(); it != held_.end();) {
        const std::shared_ptr<send_op> op = it->first;
        const int k = it->second, p = layout_.process(op->dest, k);
        const bool settled = op->complete || op->to[static_cast<std::size_t>(k)].s != send_op::state::awaiting_ack ||
                             layout_.dead(p);
        const bool wait = std::find(blocked.begin(), blocked.end(), p) != blocked.end() || !may_send_copy(*op, p);
        if (!settled && wait) {
            blocked.push_back(p);
            ++it;
            continue;
        }
        it = held_.erase(it);
        any = true;
        if (settled) continue;
        start_copy(op, k);
        finish(*op);  // a small copy may have left at once
    }
    return any;
}

}  // namespace rampart::replica::detail
