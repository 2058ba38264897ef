// The fault-tolerant hypercube barrier (hypercube.hpp) on the service: its
// messages go through shared-memory mailboxes when every rank runs on one
// node (barrier_mailboxes.hpp), else as service messages through the
// engine, sent again after a recovery (which may drop messages in flight).

#include <rampart/pgas/barrier.hpp>

#include "hypercube.hpp"
#include "pgas_service.hpp"
#include "wire.hpp"

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>

namespace rampart::pgas {

void barrier() { detail::pgas_service::get().barrier(); }

}  // namespace rampart::pgas

namespace rampart::pgas::detail {

namespace {

struct start_part {
    std::int64_t pid;
    std::uint64_t node;
    std::uint8_t mailbox;  // created here
};

}  // namespace

// Collective, at the service's start: every rank tells its process, its
// node and whether it made a mailbox; the mailboxes are used when every
// living rank made one on this node (all decide alike from the same parts).
void pgas_service::start_mailboxes() {
    try {
        mail_ = std::make_unique<barrier_mailboxes>(me_, p_);
    } catch (const std::exception&) {
        mail_.reset();  // no shared memory here: messages
    }
    const start_part mine{static_cast<std::int64_t>(::getpid()), node_, mail_ ? std::uint8_t{1} : std::uint8_t{0}};
    std::vector<char> bytes(sizeof mine);
    std::memcpy(bytes.data(), &mine, sizeof mine);
    const auto parts = exchange(0, bytes);
    std::vector<std::int64_t> pids(static_cast<std::size_t>(p_), 0);
    nodes_.assign(static_cast<std::size_t>(p_), 0);
    bool usable = true;
    for (int r = 0; r < p_; ++r) {
        const auto& part = parts[static_cast<std::size_t>(r)];
        if (part.size() != sizeof(start_part)) continue;  // dead before it told
        start_part sp{};
        std::memcpy(&sp, part.data(), sizeof sp);
        usable = usable && sp.mailbox == 1 && sp.node == mine.node;
        nodes_[static_cast<std::size_t>(r)] = sp.node;
        pids[static_cast<std::size_t>(r)] = sp.pid;
    }
    if (!usable) {
        mail_.reset();
        return;
    }
    mail_->connect(pids);
}

void pgas_service::post_steps(std::uint64_t seq, int from_step, int upto_step) {
    const auto a = alive();
    for (int k = from_step; k <= upto_step; ++k) {
        const auto message = mail_ ? std::vector<char>{}
                                   : encode({head::magic_value, kind::barrier, seq, static_cast<std::uint32_t>(k), 0});
        for (int peer : hypercube_peers(me_, k, a)) {
            if (peer >= p_) continue;
            if (mail_) {
                mail_->post(peer, k, seq);
            } else {
                send_to(peer, message);
            }
        }
    }
}

bool pgas_service::step_done(std::uint64_t seq, int k) {
    if (!other_half_alive(me_, k, alive())) return true;
    if (mail_) {
        const int base = ((me_ >> k) ^ 1) << k;
        for (int s = base; s < base + (1 << k) && s < p_; ++s)
            if (mail_->heard(k, s, seq)) return true;
        return false;
    }
    std::lock_guard l(m_);
    auto it = steps_seen_.find(seq);
    if (it == steps_seen_.end()) return false;
    for (auto [step, source] : it->second)
        if (step == k && in_other_half(me_, k, source)) return true;
    return false;
}

// Tells the peers of steps 0..k again when a death was learnt of since
// `seen`: it may have given this rank new peers (it became a substitute).
void pgas_service::post_again_if_deaths(std::uint64_t seq, int k, std::uint64_t& seen) {
    const std::uint64_t now = deaths();
    if (now == seen) return;
    seen = now;
    post_steps(seq, 0, k);
}

// Until step k is done.
void pgas_service::wait_step(std::uint64_t seq, int k, std::uint64_t& seen) {
    for (int polls = 0; !step_done(seq, k); ++polls) {
        post_again_if_deaths(seq, k, seen);
        if (mail_) {
            if (polls > 0) sched_yield();  // the rank to hear from may need this core (ranks often outnumber cores)
        } else {
            std::unique_lock l(m_);
            cv_.wait_for(l, std::chrono::milliseconds(2));
        }
    }
}

// Deaths are taken once before the first peers are chosen and checked after
// every step; the end is published before the last check, so that a death
// learnt of later finds this barrier as the last one ended and the service's
// thread sends it again (resend_after_recovery).
void pgas_service::barrier() {
    const int steps = hypercube_steps(p_);
    if (!mail_) busy(1);  // the engine polls without pausing while messages are awaited
    const std::uint64_t seq = barrier_seq_.load();
    std::uint64_t seen = deaths();
    for (int k = 0; k < steps; ++k) {
        post_steps(seq, k, k);
        wait_step(seq, k, seen);
        post_again_if_deaths(seq, k, seen);
    }
    barrier_seq_.store(seq + 1);
    post_again_if_deaths(seq, steps - 1, seen);
    if (mail_) {
        mail_->forget_name();  // every living rank has mapped it: it entered this barrier
    } else {
        busy(-1);
        std::lock_guard l(m_);
        steps_seen_.erase(steps_seen_.begin(), steps_seen_.lower_bound(seq + 1));
    }
}

}  // namespace rampart::pgas::detail
