// The barrier's mailboxes in shared memory (see barrier_mailboxes.hpp).

#include "barrier_mailboxes.hpp"

#include <unistd.h>

#include <atomic>

namespace rampart::pgas::detail {

namespace {
std::string mailbox_name(std::int64_t pid) { return "/rampart-pgas." + std::to_string(pid) + ".barrier"; }
}  // namespace

barrier_mailboxes::barrier_mailboxes(int me, int p) : me_(me), p_(p), boxes_(static_cast<std::size_t>(p)) {
    const auto bytes = static_cast<std::size_t>(max_steps) * static_cast<std::size_t>(p) * sizeof(std::uint64_t);
    boxes_[static_cast<std::size_t>(me)] = shared_segment::create(mailbox_name(::getpid()), bytes);
}

void barrier_mailboxes::connect(const std::vector<std::int64_t>& pids) {
    pids_ = pids;
    for (int r = 0; r < p_; ++r) {
        if (r == me_ || pids[static_cast<std::size_t>(r)] == 0) continue;
        try {
            boxes_[static_cast<std::size_t>(r)] = shared_segment::open(mailbox_name(pids[static_cast<std::size_t>(r)]));
        } catch (const std::exception&) {
            // It died and a survivor removed its name: posts to it are dropped.
        }
    }
}

void barrier_mailboxes::forget_name() {
    if (named_) shared_segment::unlink(mailbox_name(::getpid()));
    named_ = false;
}

void barrier_mailboxes::forget_name_of(int rank) {
    if (rank != me_ && rank < static_cast<int>(pids_.size()) && pids_[static_cast<std::size_t>(rank)] != 0)
        shared_segment::unlink(mailbox_name(pids_[static_cast<std::size_t>(rank)]));
}

std::uint64_t* barrier_mailboxes::slot(char* base, int step, int source) const {
    return reinterpret_cast<std::uint64_t*>(base) + static_cast<std::size_t>(step) * static_cast<std::size_t>(p_) +
           static_cast<std::size_t>(source);
}

void barrier_mailboxes::post(int dest, int step, std::uint64_t seq) {
    char* box = boxes_[static_cast<std::size_t>(dest)].data();
    if (!box) return;  // dead at start-up
    std::atomic_ref word(*slot(box, step, me_));
    std::uint64_t was = word.load(std::memory_order_relaxed);
    while (was < seq + 1 && !word.compare_exchange_weak(was, seq + 1, std::memory_order_release)) {
    }
}

bool barrier_mailboxes::heard(int step, int source, std::uint64_t seq) const {
    std::atomic_ref word(*slot(boxes_[static_cast<std::size_t>(me_)].data(), step, source));
    return word.load(std::memory_order_acquire) >= seq + 1;
}

}  // namespace rampart::pgas::detail
