#pragma once
// The other processes of a replicated job, played by a test: what the
// protocol under test sends is recorded, what they send it is queued by the
// test in the order it chooses, and deaths happen when the test says. As
// with ULFM, a death makes the next receive from any source fail until the
// protocol asks which processes failed, and a message cut off by its
// sender's death fails to arrive.

#include "transport.hpp"

#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <stdexcept>
#include <vector>

namespace rampart::replica::test {

class scripted_world final : public detail::transport {
public:
    struct message {
        int process = 0;  // the sender (incoming) or the destination (sent)
        int tag = 0;
        std::vector<char> bytes;
        bool synchronous = false;
        bool whole = true;  // incoming: false when its sender dies before it has all arrived
        std::uint64_t word(int i) const {
            std::uint64_t w = 0;
            std::memcpy(&w, bytes.data() + i * sizeof w, sizeof w);
            return w;
        }
    };

    /// What the protocol sent, in order.
    std::vector<message> sent;

    /// A message from `process` to the protocol, after those queued before.
    void arrives(int process, int tag, std::vector<char> bytes, bool whole = true) {
        incoming_.push_back({process, tag, std::move(bytes), false, whole});
    }
    void control(int process, int tag, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0) {
        std::vector<char> bytes(3 * sizeof a);
        const std::uint64_t words[3] = {a, b, c};
        std::memcpy(bytes.data(), words, bytes.size());
        arrives(process, tag, std::move(bytes));
    }
    void dies(int process) {
        dead_.push_back(process);
        unacknowledged_ = true;
    }
    /// The next gathering on this process's replica set: the other ranks'
    /// blocks, as their processes send them (by rank); without one, the
    /// gathering fails as when a member of the set died.
    void set_gathers(std::map<int, std::vector<char>> blocks) { set_gatherings_.push_back(std::move(blocks)); }
    bool set_revoked() const { return set_revoked_; }

    /// The messages sent to `process` with `tag`.
    std::vector<message> sent_to(int process, int tag) const {
        std::vector<message> out;
        for (const message& m : sent)
            if (m.process == process && m.tag == tag) out.push_back(m);
        return out;
    }

    int isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, bool synchronous,
              MPI_Request* request) override {
        if (dead(dest)) return MPIX_ERR_PROC_FAILED;
        const auto* p = static_cast<const char*>(buf);
        sent.push_back({dest, tag, std::vector<char>(p, p + bytes_of(count, type)), synchronous, true});
        *request = handle(true, -1);
        return MPI_SUCCESS;
    }
    int iprobe(int source, int tag, int* flag, MPI_Status* status) override {
        MPI_Message m = MPI_MESSAGE_NULL;
        return find(source, tag, flag, &m, status, false);
    }
    int improbe(int source, int tag, int* flag, MPI_Message* msg, MPI_Status* status) override {
        return find(source, tag, flag, msg, status, true);
    }
    int mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg) override {
        const message m = take(msg);
        copy_out(m, buf, count, type);
        return MPI_SUCCESS;
    }
    int imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* msg, MPI_Request* request) override {
        const message m = take(msg);
        if (!m.whole) {  // the rest never comes
            *request = handle(false, m.process);
            return MPI_SUCCESS;
        }
        copy_out(m, buf, count, type);
        *request = handle(true, -1);
        return MPI_SUCCESS;
    }
    int test(MPI_Request* request, int* flag) override {
        if (*request == MPI_REQUEST_NULL) {
            *flag = 1;
            return MPI_SUCCESS;
        }
        request_state& r = state(*request);
        *flag = 0;
        if (!r.complete && !dead(r.from)) return MPI_SUCCESS;
        *request = MPI_REQUEST_NULL;
        if (!r.complete) return MPIX_ERR_PROC_FAILED;
        *flag = 1;
        return MPI_SUCCESS;
    }
    int wait(MPI_Request* request) override {
        int flag = 0;
        const int rc = test(request, &flag);
        if (rc == MPI_SUCCESS && !flag) throw std::logic_error("a wait that would never end");
        return rc;
    }
    int count(const MPI_Status& status, MPI_Datatype type) override {
        int n = 0;
        PMPI_Get_count(&status, type, &n);
        return n;
    }
    std::vector<int> failed() override {
        unacknowledged_ = false;
        return dead_;
    }

    bool split_sets(int /*replica*/, int rank) override {
        set_rank_ = rank;
        return true;
    }
    int set_iallgatherv(const void* send, int count, void* out, const int* counts, const int* displs,
                        MPI_Request* request) override {
        if (set_revoked_ || set_gatherings_.empty()) return MPIX_ERR_PROC_FAILED;
        auto blocks = std::move(set_gatherings_.front());
        set_gatherings_.pop_front();
        auto* to = static_cast<char*>(out);
        if (send != MPI_IN_PLACE && count > 0) std::memcpy(to + displs[set_rank_], send, static_cast<std::size_t>(count));
        for (auto& [rank, bytes] : blocks) {
            if (static_cast<int>(bytes.size()) != counts[rank]) throw std::logic_error("a block of the wrong size");
            std::memcpy(to + displs[rank], bytes.data(), bytes.size());
        }
        *request = handle(true, -1);
        return MPI_SUCCESS;
    }
    void revoke_set() override { set_revoked_ = true; }

private:
    struct request_state {
        bool complete = false;
        int from = -1;  // an incomplete receive: its sender
    };

    static std::size_t bytes_of(int count, MPI_Datatype type) {
        int size = 0;
        PMPI_Type_size(type, &size);
        return static_cast<std::size_t>(count) * static_cast<std::size_t>(size);
    }
    bool dead(int p) const { return std::find(dead_.begin(), dead_.end(), p) != dead_.end(); }
    MPI_Request handle(bool complete, int from) {
        requests_.push_back({complete, from});
        return reinterpret_cast<MPI_Request>(&requests_.back());
    }
    request_state& state(MPI_Request r) { return *reinterpret_cast<request_state*>(r); }

    int find(int source, int tag, int* flag, MPI_Message* msg, MPI_Status* status, bool take_it) {
        *flag = 0;
        if (source == MPI_ANY_SOURCE && unacknowledged_) return MPIX_ERR_PROC_FAILED_PENDING;
        for (auto it = incoming_.begin(); it != incoming_.end(); ++it) {
            if ((source != MPI_ANY_SOURCE && it->process != source) || (tag != MPI_ANY_TAG && it->tag != tag))
                continue;
            *flag = 1;
            if (status != MPI_STATUS_IGNORE) {
                status->MPI_SOURCE = it->process;
                status->MPI_TAG = it->tag;
                status->MPI_ERROR = MPI_SUCCESS;
                PMPI_Status_set_elements(status, MPI_BYTE, static_cast<int>(it->bytes.size()));
            }
            if (take_it) {
                matched_.push_back(std::move(*it));
                incoming_.erase(it);
                *msg = reinterpret_cast<MPI_Message>(&matched_.back());
            }
            return MPI_SUCCESS;
        }
        return MPI_SUCCESS;
    }
    message take(MPI_Message* msg) {
        message m = std::move(*reinterpret_cast<message*>(*msg));
        *msg = MPI_MESSAGE_NULL;
        return m;
    }
    static void copy_out(const message& m, void* buf, int count, MPI_Datatype type) {
        if (m.bytes.size() > bytes_of(count, type)) throw std::logic_error("a message larger than its receive");
        if (!m.bytes.empty()) std::memcpy(buf, m.bytes.data(), m.bytes.size());
    }

    std::list<message> incoming_;
    std::list<message> matched_;  // handed out by improbe, until received
    std::deque<request_state> requests_;
    std::vector<int> dead_;
    bool unacknowledged_ = false;
    std::deque<std::map<int, std::vector<char>>> set_gatherings_;
    int set_rank_ = 0;
    bool set_revoked_ = false;
};

}  // namespace rampart::replica::test
