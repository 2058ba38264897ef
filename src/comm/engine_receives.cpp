// Receives of the numbered channels: messages probed and matched per (source,
// tag), delivered in sequence order to the oldest waiting receive, kept when
// they come before their receive, dropped when they are duplicates, and
// failed when they can never come.

#include "engine_impl.hpp"

#include <rampart/comm/errors.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace rampart::comm::detail {

std::size_t engine::impl::pending_receives() const {
    std::size_t n = 0;
    for (auto& [k, c] : channels_) n += c.waiting.size() + (c.duplicates_due() > 0 ? 1 : 0);
    return n;
}

void engine::impl::fail_front(channel& ch, std::exception_ptr error) {
    op_recv o = std::move(ch.waiting.front());
    ch.waiting.pop_front();
    o.target->fail(std::move(error));
}

void engine::impl::fail_all_waiting(const std::string& why) {
    for (auto& [key, ch] : channels_) {
        if (ch.busy) continue;  // its message has arrived already
        while (!ch.waiting.empty())
            fail_front(
                ch, std::make_exception_ptr(comm_error("rampart: irecv from rank " + std::to_string(key.first) +
                                                       " with tag " + std::to_string(key.second) + " failed: " + why)));
    }
}

bool engine::impl::progress_receives() {
    bool progress = false;
    for (auto& [key, ch] : channels_) {
        if (ch.busy) continue;
        deliver_early(ch);  // messages that came first go first
        if (!ch.waiting.empty() && ch.lost()) {
            fail_lost(key, ch);
            progress = true;
            continue;
        }
        if (!ch.waiting.empty() && !ch.early && ended_for_good(key, ch)) {
            fail_ended(key, ch);
            progress = true;
            continue;
        }
        if (ch.early || (ch.waiting.empty() && ch.duplicates_due() == 0)) continue;
        const int source = comm_rank_of_logical(key.first);
        if (source < 0) continue;  // failed at recovery already
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        int rc = MPI_Improbe(source, key.second, comm_, &flag, &msg, &st);
        if (rc != MPI_SUCCESS) {
            failure_text(rc);  // recovery re-posts this receive
            return true;
        }
        if (!flag) continue;
        progress = true;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        active_recv& a = recvs_.emplace_back();  // in place: MPI keeps addresses into it
        a.key = key;
        if (static_cast<std::size_t>(count) < sizeof(envelope)) {
            a.truncated = true;
            a.fits = false;
            a.scratch.resize(static_cast<std::size_t>(count));
            MPI_Imrecv(a.scratch.data(), count, MPI_BYTE, &msg, &a.request);
        } else {
            a.payload_bytes = static_cast<std::size_t>(count) - sizeof(envelope);
            // Without a waiting receive (an expected duplicate) the payload
            // goes to scratch.
            a.target_memory = ch.waiting.empty() ? nullptr : ch.waiting.front().target->prepare(a.payload_bytes);
            a.fits = a.target_memory != nullptr;
            a.is_packed = a.payload_bytes <= small_payload;
            if (a.is_packed) {
                MPI_Imrecv(a.packed.data(), count, MPI_BYTE, &msg, &a.request);
            } else {
                if (!a.fits) a.scratch.resize(a.payload_bytes);
                void* where = a.fits ? a.target_memory : static_cast<void*>(a.scratch.data());
                MPI_Datatype t = message_type(&a.env, where, a.payload_bytes);
                MPI_Imrecv(MPI_BOTTOM, 1, t, &msg, &a.request);
                MPI_Type_free(&t);
            }
        }
        ch.busy = true;
    }
    return progress;
}

bool engine::impl::test_receives() {
    bool progress = false;
    for (auto it = recvs_.begin(); it != recvs_.end();) {
        int flag = 0;
        int rc = MPI_Test(&it->request, &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        channel& ch = channels_[it->key];
        ch.busy = false;
        progress = true;
        if (rc != MPI_SUCCESS)
            failure_text(rc);  // the receive stays waiting; recovery has it sent again
        else
            complete(ch, *it);
        it = recvs_.erase(it);
    }
    return progress;
}

void engine::impl::complete(channel& ch, active_recv& r) {
    if (r.is_packed) {
        // The target took exactly payload_bytes in prepare(), so the copy fits
        // whatever the envelope turns out to say.
        std::memcpy(&r.env, r.packed.data(), sizeof(envelope));
        if (r.fits && r.payload_bytes > 0)
            std::memcpy(r.target_memory, r.packed.data() + sizeof(envelope), r.payload_bytes);
    }
    const envelope& e = r.env;
    const auto checked = r.truncated ? check_envelope(r.scratch.data(), r.scratch.size(), 0)
                                     : check_envelope(&r.env, sizeof r.env, r.payload_bytes);
    if (!checked) {
        ++malformed_;
        if (!ch.waiting.empty())
            fail_front(ch, std::make_exception_ptr(message_error("rampart: malformed message: " + checked.why())));
        return;
    }
    if (e.sequence > ch.next_sequence) {
        // The messages in between will never come (a channel's messages
        // arrive in order): fail the channel's receives rather than hand over
        // a later message in their place.
        ch.stream_next = std::max(ch.stream_next, e.sequence);
        if (!ch.waiting.empty()) fail_lost(r.key, ch);  // else when a receive is posted
        ch.stream_next = std::max(ch.stream_next, e.sequence + 1);
        return;
    }
    ch.stream_next = std::max(ch.stream_next, e.sequence + 1);
    if (e.sequence < ch.next_sequence) {
        ++duplicates_;  // already delivered: the receiver keeps waiting
        return;
    }
    if (ch.waiting.empty()) {
        // Not a duplicate: a message for a receive not yet posted.
        const char* from = r.is_packed ? r.packed.data() + sizeof(envelope) : r.scratch.data();
        ch.early.emplace(early_message{e, std::vector<char>(from, from + r.payload_bytes)});
        return;
    }
    op_recv o = take_front(ch, e, r.payload_bytes);
    if (!r.fits) return fail_mismatch(o, e, r.payload_bytes);
    o.target->deliver(e);
}

// The message is the channel's next: it goes to the oldest waiting receive.
engine::impl::op_recv engine::impl::take_front(channel& ch, const envelope& e, std::size_t payload_bytes) {
    ch.next_sequence = e.sequence + 1;
    ++received_;
    bytes_received_ += payload_bytes;
    op_recv o = std::move(ch.waiting.front());
    ch.waiting.pop_front();
    return o;
}

void engine::impl::fail_mismatch(op_recv& o, const envelope& e, std::size_t payload_bytes) {
    o.target->fail(
        std::make_exception_ptr(message_error(describe_mismatch(e, o.target->expected_type(), payload_bytes))));
}

// A receive posted after its message arrived takes it from the channel.
void engine::impl::deliver_early(channel& ch) {
    if (!ch.early || ch.waiting.empty() || ch.busy || ch.early->env.sequence != ch.next_sequence) return;
    early_message m = std::move(*ch.early);
    ch.early.reset();
    op_recv o = take_front(ch, m.env, m.payload.size());
    void* dst = o.target->prepare(m.payload.size());
    if (!dst) return fail_mismatch(o, m.env, m.payload.size());
    if (!m.payload.empty()) std::memcpy(dst, m.payload.data(), m.payload.size());
    o.target->deliver(m.env);
}

std::string engine::impl::lost_text(const std::pair<int, int>& key, const channel& ch) const {
    const std::uint64_t resumes =
        ch.early && ch.early->env.sequence > ch.next_sequence ? ch.early->env.sequence : ch.stream_next;
    return "rampart: irecv from rank " + std::to_string(key.first) + " with tag " + std::to_string(key.second) +
           " failed: messages " + std::to_string(ch.next_sequence) + " to " + std::to_string(resumes - 1) +
           " of this channel are lost for good (the sender goes on from message " + std::to_string(resumes) +
           "): no process can send them again. The sender's log was trimmed past them at a checkpoint that this "
           "rank was not restored from, or they were lost in a crash without a send log";
}

void engine::impl::fail_lost(const std::pair<int, int>& key, channel& ch) {
    const std::string text = lost_text(key, ch);
    if (!ch.lost_reported) {
        ch.lost_reported = true;
        ++channels_lost_;
        std::fprintf(stderr, "rampart: rank %d: %s\n", owner_.rank_, text.c_str());
    }
    while (!ch.waiting.empty()) fail_front(ch, std::make_exception_ptr(comm_error(text)));
}

}  // namespace rampart::comm::detail
