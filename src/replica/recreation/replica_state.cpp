// What a survivor gives a re-created replica, and how the spare becomes one.
//
// A plain MPI program's memory cannot be copied, so the program names its
// state (rampart_replica_protect) and the spare runs the program from
// main: its set-up (allocations, communicators, parameters) is made again
// by the program itself. What the set-up received from other ranks comes
// from the survivor's log of the messages its program received before its
// first sync, not from the senders (who sent them long ago); what the set-up
// sends goes nowhere (its receivers have it). At its first sync the spare
// takes the protected memory and the protocol's counters as the survivor
// had them at the sync of the re-creation, and goes on from there as a
// replica like the others.

#include "protocol.hpp"

#include "communicators.hpp"
#include "datatypes.hpp"
#include "report.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace rampart::replica::detail {

namespace {
// A program that never syncs would log every message it receives: beyond
// this the log is dropped and its replicas cannot be re-created.
constexpr std::size_t setup_log_limit = 64 * 1024 * 1024;

struct carried_state {
    std::int64_t sync = 0;
    std::vector<std::uint64_t> next_number, next_expected;
    std::vector<std::pair<int, int>> communicators;  // id, collectives started
    std::vector<std::vector<char>> regions;
    std::vector<std::tuple<int, int, std::vector<char>>> setup_log;  // source rank, tag, bytes

    template <class Archive>
    void serialize(Archive& a) {
        a(sync, next_number, next_expected, communicators, regions, setup_log);
    }
};

carried_state read_state(const std::vector<char>& bytes) {
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    carried_state s;
    cereal::BinaryInputArchive archive(in);
    archive(s);
    return s;
}

std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

void protocol::log_delivery(const inbound& in) {
    const recv_request& r = *in.target;
    std::vector<char> bytes;
    if (in.direct) {
        bytes = pack(r.buf, r.count, r.type);
        bytes.resize(std::min(bytes.size(), in.bytes));
    } else {
        bytes.assign(in.buffer.begin(), in.buffer.begin() + static_cast<std::ptrdiff_t>(in.bytes));
    }
    setup_log_bytes_ += bytes.size();
    if (setup_log_bytes_ > setup_log_limit) {
        setup_log_lost_ = true;
        logging_ = false;
        setup_log_ = {};
        return;
    }
    setup_log_.push_back({in.source, in.tag, std::move(bytes)});
}

// Taken at the sync of a re-creation, by every replica of the rank (the
// survivor is elected later).
void protocol::snapshot() {
    carried_state s;
    s.sync = syncs_ + 1;
    s.next_number = next_number_;
    s.next_expected = next_expected_;
    for (communicator* c : communicators::get().all()) s.communicators.emplace_back(c->id, c->collectives);
    for (const region& r : regions_)
        s.regions.emplace_back(static_cast<const char*>(r.data), static_cast<const char*>(r.data) + r.bytes);
    for (const logged_message& m : setup_log_) s.setup_log.emplace_back(m.source, m.tag, m.bytes);
    std::ostringstream out;
    {
        cereal::BinaryOutputArchive archive(out);
        archive(s);
    }
    const std::string text = out.str();
    snapshot_.assign(text.begin(), text.end());
}

void protocol::send_state(int to) {
    MPI_Request request = MPI_REQUEST_NULL;
    if (net_->isend(snapshot_.data(), static_cast<int>(snapshot_.size()), MPI_BYTE, to, state_tag, false,
                   &request) != MPI_SUCCESS)
        return;  // the spare died: the replica stays dead
    int done = 0;
    wait_until([&] {
        if (net_->test(&request, &done) != MPI_SUCCESS) {
            check_failures(MPI_ERR_OTHER);
            return true;
        }
        return done != 0;
    });
    ++states_sent;
}

void protocol::on_state(MPI_Message msg, const MPI_Status& st) {
    const int bytes = net_->count(st, MPI_BYTE);
    std::vector<char> text(static_cast<std::size_t>(bytes));
    net_->mrecv(text.data(), bytes, MPI_BYTE, &msg);
    if (have_state_ || rank_ < 0) return;  // a second survivor's, or not for this process
    state_ = std::move(text);
    have_state_ = true;
}

// The spare takes the survivor's counters: from here on it receives and
// sends as the survivor would have from the sync on. What it received
// meanwhile (kept aside: its counters were not known) is taken now.
void protocol::install_state() {
    carried_state s;
    try {
        s = read_state(state_);
    } catch (const std::exception& e) {
        abort_job(3, std::string("a malformed state for a re-created replica: ") + e.what());
    }
    if (s.next_number.size() != next_number_.size() || s.next_expected.size() != next_expected_.size())
        abort_job(3, "a state for a re-created replica of another job's shape");
    next_number_ = s.next_number;
    next_expected_ = s.next_expected;
    for (std::size_t j = 0; j < early_acks_.size(); ++j) {  // for messages the survivor sent before
        std::erase_if(early_acks_[j], [&](const auto& e) { return e.first.first < next_number_[j]; });
        std::erase_if(early_matches_[j], [&](const auto& e) { return e.first < next_number_[j]; });
    }
    for (auto& [source, tag, bytes] : s.setup_log) setup_log_.push_back({source, tag, std::move(bytes), false});
    syncs_ = static_cast<long>(s.sync) - 1;  // the program's first sync is that one
    replaying_ = true;
    recreation_done_us = now_us();
    state_bytes = state_.size();
    report_recreated(*this);
    for (int i = 0; i < layout_.ranks(); ++i) {
        source_process_[static_cast<std::size_t>(i)] = layout_.process(i, layout_.responsible(i, replica_));
        replay_stash(source_process_[static_cast<std::size_t>(i)]);
    }
    // The set-up's output was printed by the replica this one replaces.
    std::fflush(stdout);
    saved_stdout_ = ::dup(STDOUT_FILENO);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
        ::dup2(null, STDOUT_FILENO);
        ::close(null);
    }
}

// The program's first sync in a re-created replica: its set-up is made,
// the protected memory takes the survivor's contents.
void protocol::finish_replay() {
    const carried_state s = read_state(state_);
    const std::string who = "the re-created replica of rank " + std::to_string(rank_);
    if (s.regions.size() != regions_.size())
        abort_job(3, who + " protected " + std::to_string(regions_.size()) + " regions, its survivor " +
                         std::to_string(s.regions.size()) + ": call rampart_replica_protect alike on every replica");
    for (std::size_t i = 0; i < regions_.size(); ++i) {
        if (s.regions[i].size() != regions_[i].bytes)
            abort_job(3, who + ": protected region " + std::to_string(i) + " has another size at its survivor");
        std::memcpy(regions_[i].data, s.regions[i].data(), regions_[i].bytes);
    }
    communicators& all = communicators::get();
    for (communicator* c : std::vector<communicator*>(all.all())) {
        auto it = std::find_if(s.communicators.begin(), s.communicators.end(),
                               [&](const auto& e) { return e.first == c->id; });
        if (it != s.communicators.end())
            c->collectives = it->second;
        else if (c != all.world() && c != all.self())
            all.free(c);  // freed by the program between its first sync and this one
    }
    if (all.all().size() != s.communicators.size())
        abort_job(3, who + ": a communicator made after the first rampart_replica_sync() is still in use; make "
                         "communicators before the first sync");
    state_ = {};
    replaying_ = false;
    std::fflush(stdout);
    if (saved_stdout_ >= 0) {
        ::dup2(saved_stdout_, STDOUT_FILENO);
        ::close(saved_stdout_);
        saved_stdout_ = -1;
    }
}

// A receive of the set-up again in a re-created replica: the message the
// survivor's program received for it, the first of the log that matches.
bool protocol::replay_receive(recv_request& r) {
    for (logged_message& m : setup_log_) {
        if (m.taken) continue;
        inbound in;
        in.source = m.source;
        in.tag = m.tag;
        in.bytes = m.bytes.size();
        if (!matches(r, in)) continue;
        m.taken = true;
        const std::size_t capacity = data_bytes(r.count, r.type);
        unpack(m.bytes, std::min(capacity, in.bytes), r.buf, r.count, r.type);
        fill_status(r.status, in, r.comm);
        if (in.bytes > capacity) r.status.MPI_ERROR = MPI_ERR_TRUNCATE;
        r.complete = true;
        return true;
    }
    abort_job(3, "the re-created replica of rank " + std::to_string(rank_) +
                     " waits in its set-up for a message its survivor never received before its first "
                     "rampart_replica_sync(): the set-up must be the same on every replica");
}

const inbound* protocol::replay_probe(int source, int tag, communicator* comm, int context, MPI_Status* status) {
    recv_request r;
    r.source = source;
    r.tag = tag;
    r.comm = comm;
    r.context = context;
    for (const logged_message& m : setup_log_) {
        if (m.taken) continue;
        replayed_.source = m.source;
        replayed_.tag = m.tag;
        replayed_.bytes = m.bytes.size();
        if (!matches(r, replayed_)) continue;
        if (status != MPI_STATUS_IGNORE) fill_status(*status, replayed_, comm);
        return &replayed_;
    }
    return nullptr;
}

}  // namespace rampart::replica::detail
