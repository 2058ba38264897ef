// Services on the engine (see rampart/comm/service.hpp): their registration,
// their messages on the service tag, the replies that go straight into the
// asker's memory, and their part in recoveries.

#include "engine_impl.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace rampart::comm::detail {

namespace {
constexpr int services_per_poll = 16;
}  // namespace

bool engine::impl::progress_services() {
    bool progress = false;
    for (int i = 0; i < services_per_poll && !failure_seen_; ++i) {
        int comm_source = -1;
        auto bytes = receive_any(service_tag_, comm_source);
        if (!bytes) break;
        progress = true;
        const int source = logical_of_comm_rank(comm_source);
        const auto service = decode_service_prefix(bytes->data(), bytes->size());
        if (source < 0 || !service) {
            ++malformed_;
            continue;
        }
        ++received_;
        bytes_received_ += bytes->size();
        std::lock_guard lock(services_mutex_);
        const int number = *service;
        if (auto it = services_.find(number); it != services_.end())
            it->second->on_message(source, std::move(*bytes), service_prefix);
        else if (number >= next_service_)  // created there already, not yet here: kept until it is
            early_services_[number].push_back({source, recoveries_ended_.load(), std::move(*bytes)});
        // else removed here: dropped
    }
    return progress || failure_seen_;
}

void engine::impl::notify_services(const std::vector<int>& replaced, const std::vector<int>& lost) {
    std::lock_guard lock(services_mutex_);
    if (lost_shared_ != lost_) losses_cv_.notify_all();
    lost_shared_ = lost_;
    for (auto& [n, s] : services_) {
        auto it = service_states_.find(n);
        s->on_recovery(replaced, lost,
                       it != service_states_.end()
                           ? it->second
                           : std::vector<std::vector<char>>(static_cast<std::size_t>(owner_.size_)));
    }
    states_pending_ = false;
    services_cv_.notify_all();
}

void engine::impl::start_service_receive(op_service_recv&& o) {
    if (comm_rank_of_logical(o.peer) < 0 || o.epoch != recoveries_ended_.load()) return o.done(false, 0);
    expected_reply& r = service_recvs_.emplace_back();
    r.service = o.service;
    r.source = o.peer;
    r.tag = reply_tag(o.reply);
    for (const receive_segment& d : o.into)
        if (d.bytes > 0) {
            r.into.push_back(d);
            r.capacity += d.bytes;
        }
    r.done = std::move(o.done);
}

// Replies of one service from one source come in the order they were
// expected (the service there answers requests in the order they arrive,
// and its engine sends in order), so each pass probes those only up to the
// first that has not come: a pass costs a probe per source and service, not
// per reply. (Not per source only: a service not yet created there would
// hold back the replies of the others.)
bool engine::impl::test_service_receives() {
    bool progress = false;
    std::vector<std::pair<int, int>> waiting;  // (source, service) whose next reply has not come
    for (auto it = service_recvs_.begin(); it != service_recvs_.end();) {
        expected_reply& r = *it;
        int flag = 0;
        if (!r.matched) {
            if (std::find(waiting.begin(), waiting.end(), std::pair{r.source, r.service}) != waiting.end()) {
                ++it;
                continue;
            }
            MPI_Message msg;
            MPI_Status st;
            const int source = comm_rank_of_logical(r.source);
            int rc = source < 0 ? MPI_ERR_RANK : MPI_Improbe(source, r.tag, comm_, &flag, &msg, &st);
            if (rc != MPI_SUCCESS) {
                failure_text(rc);  // recovery fails it
                return true;
            }
            if (!flag) {
                waiting.emplace_back(r.source, r.service);
                ++it;
                continue;
            }
            progress = true;
            rc = receive_reply(r, msg, st);
            if (rc != MPI_SUCCESS) {  // nothing was given to MPI: the reply did not come
                failure_text(rc);
                auto done = std::move(r.done);
                service_recvs_.erase(it);
                done(false, 0);
                return true;
            }
        }
        const int rc = MPI_Test(&r.request, &flag, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !flag) {
            ++it;
            continue;
        }
        progress = true;
        auto done = std::move(r.done);
        const std::size_t bytes = r.bytes;
        const bool too_long = bytes > r.capacity;
        it = service_recvs_.erase(it);
        if (rc != MPI_SUCCESS) {
            failure_text(rc);
            done(false, 0);
            continue;
        }
        ++received_;
        bytes_received_ += bytes;
        if (too_long) ++malformed_;
        done(true, bytes);
    }
    return progress;
}

// Posts the receive of the matched reply `msg` into the memory given for it,
// or into scratch when it is longer (counted as malformed once it is in).
int engine::impl::receive_reply(expected_reply& r, MPI_Message& msg, MPI_Status& st) {
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    // A reply of more bytes than an int counts is none of ours (they are at
    // most max_reply_bytes): received as one too long, into 16 MiB elements
    // of scratch.
    const bool huge = count == MPI_UNDEFINED || count < 0;
    r.bytes = huge ? SIZE_MAX : static_cast<std::size_t>(count);
    r.matched = true;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_SUCCESS;
    if (huge) {
        MPI_Count bytes = 0;
        MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
        const auto units = static_cast<std::size_t>((std::max<MPI_Count>(bytes, 0) >> 24) + 1);
        r.scratch.resize(units << 24);
        MPI_Type_contiguous(1 << 24, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        rc = MPI_Imrecv(r.scratch.data(), static_cast<int>(units), t, &msg, &r.request);
    } else if (r.bytes > r.capacity) {
        r.scratch.resize(r.bytes);
        rc = MPI_Imrecv(r.scratch.data(), count, MPI_BYTE, &msg, &r.request);
    } else if (r.into.size() <= 1) {
        rc = MPI_Imrecv(r.into.empty() ? nullptr : r.into.front().data, count, MPI_BYTE, &msg, &r.request);
    } else if ((rc = pieces_type(r.into, t)) == MPI_SUCCESS) {
        rc = MPI_Imrecv(MPI_BOTTOM, 1, t, &msg, &r.request);
    }
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    return rc;
}

// At a revoke: replies not yet matched will never come on the old
// communicator; their services ask again in on_recovery.
void engine::impl::fail_unmatched_replies() {
    for (auto it = service_recvs_.begin(); it != service_recvs_.end();) {
        if (it->matched) {
            ++it;
            continue;
        }
        auto done = std::move(it->done);
        it = service_recvs_.erase(it);
        done(false, 0);
    }
}

// Not while a recovery has taken the states of the services and not yet
// told them: the new one then starts from that recovery's states, which it
// gets before any message, with no recovery in between.
int engine::add_service(service* s) {
    std::unique_lock lock(impl_->services_mutex_);
    impl_->services_cv_.wait(lock, [&] { return !impl_->states_pending_; });
    const int n = impl_->next_service_++;
    s->number_ = n;
    const auto states = impl_->service_states_.find(n);
    s->on_attach(states == impl_->service_states_.end() ? std::vector<std::vector<char>>{} : states->second);
    impl_->services_[n] = s;
    impl_->has_services_ = true;
    // What came for it before it existed here, in order of arrival.
    if (auto it = impl_->early_services_.find(n); it != impl_->early_services_.end()) {
        for (auto& m : it->second)
            if (m.epoch == impl_->recoveries_ended_.load())  // else the sender asks again after the recovery
                s->on_message(m.source, std::move(m.bytes), service_prefix);
        impl_->early_services_.erase(it);
    }
    return n;
}

void engine::remove_service(int number) {
    std::lock_guard lock(impl_->services_mutex_);
    impl_->services_.erase(number);
    impl_->has_services_ = !impl_->services_.empty();
}

void engine::service_send(int number, int dest, std::vector<char> head, std::vector<segment> data,
                          std::function<void(bool)> done, std::uint64_t epoch) {
    std::vector<char> prefixed(service_prefix + head.size());
    write_service_prefix(prefixed.data(), number);
    if (!head.empty()) std::memcpy(prefixed.data() + service_prefix, head.data(), head.size());
    impl_->push(impl::op_service{dest, std::move(prefixed), std::move(data), std::move(done), epoch});
}

void engine::service_receive(int number, int source, std::uint64_t reply, std::vector<receive_segment> into,
                             std::function<void(bool, std::size_t)> done, std::uint64_t epoch) {
    impl_->push(impl::op_service_recv{number, source, reply, std::move(into), std::move(done), epoch});
}

void engine::service_reply(int dest, std::uint64_t reply, std::vector<segment> data, std::function<void(bool)> done,
                           std::uint64_t epoch) {
    std::size_t bytes = 0;
    for (const segment& d : data) bytes += d.bytes;
    if (bytes > max_reply_bytes)
        throw rampart::invalid_argument("rampart: a service reply of " + std::to_string(bytes) + " bytes (at most " +
                                        std::to_string(max_reply_bytes) + ")");
    impl_->push(impl::op_service_reply{dest, reply, std::move(data), std::move(done), epoch});
}

void engine::service_busy(int delta) {
    impl_->service_busy_ += delta;
    if (delta > 0) impl_->cv_.notify_one();  // stop a pause at once
}

int engine::incarnation_of(int logical) const {
    std::lock_guard lock(impl_->incarnations_mutex_);
    const auto at = static_cast<std::size_t>(logical);
    return at < impl_->incarnations_.size() ? impl_->incarnations_[at] : 0;
}

std::uint64_t engine::recoveries() const { return impl_->recoveries_ended_.load(); }

}  // namespace rampart::comm::detail
