// The arrays' service: deaths, collective exchanges, the barrier's
// messages, and the repairs after a failure (see pgas_service.hpp).

#include "pgas_service.hpp"

#include "hypercube.hpp"
#include "message_path.hpp"
#include "wire.hpp"

#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>

#include <rampart/task/config.hpp>

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>

namespace rampart::pgas::detail {

namespace {
std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
// Own parts of this many recent exchanges are kept, to be sent again after
// a recovery (a recovery may drop messages in flight).
constexpr std::size_t kept_exchanges = 4;
}  // namespace

namespace {
std::uint64_t node_of(int rank) {
    if (const auto k = read_environment_config().ranks_per_node)
        return (std::uint64_t{1} << 63) | static_cast<std::uint64_t>(rank / *k);
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return 1;
    return (std::hash<std::string>{}(name) | 1) & ~(std::uint64_t{1} << 63);
}
}  // namespace

pgas_service& pgas_service::get() {
    static pgas_service s;
    return s;
}

pgas_service::pgas_service() : me_(comm::rank()), p_(comm::size()), node_(node_of(me_)) {
    const auto n = static_cast<std::size_t>(p_);
    dead_ = std::make_unique<std::atomic<std::uint8_t>[]>(n);
    death_us_ = std::make_unique<std::atomic<std::int64_t>[]>(n);
    for (std::size_t r = 0; r < n; ++r) {
        dead_[r].store(0);
        death_us_[r].store(0);
    }
    for (int r : recovery::lost_ranks()) dead_[static_cast<std::size_t>(r)].store(1);
    attach();
    start_mailboxes();
    worker_ = std::thread([this] { run_jobs(); });  // last: its jobs use the mailboxes
}

pgas_service::~pgas_service() {
    detach();
    {
        std::lock_guard l(jobs_m_);
        stop_ = true;
    }
    jobs_cv_.notify_all();
    if (worker_.joinable()) worker_.join();
}

std::vector<char> pgas_service::alive() const {
    std::vector<char> a(static_cast<std::size_t>(p_));
    for (int r = 0; r < p_; ++r) a[static_cast<std::size_t>(r)] = dead(r) ? 0 : 1;
    return a;
}

std::int64_t pgas_service::death_known_us(int r) const { return death_us_[static_cast<std::size_t>(r)].load(); }

void pgas_service::send_to(int dest, const std::vector<char>& message) {
    send(dest, message, {}, [](bool) {}, epoch());
}

std::vector<std::vector<char>> pgas_service::exchange(std::uint64_t key, std::vector<char> mine) {
    busy(1);  // the engine polls without pausing while this rank waits
    struct idle_again {
        pgas_service& s;
        ~idle_again() { s.busy(-1); }
    } after{*this};
    const auto message = encode({head::magic_value, kind::exchange, key, 0, 0}, mine);
    {
        std::lock_guard l(m_);
        my_parts_[key] = mine;
        while (my_parts_.size() > kept_exchanges) my_parts_.erase(my_parts_.begin());
    }
    const auto send_mine = [&] {
        for (int r = 0; r < p_; ++r)
            if (r != me_ && !dead(r)) send_to(r, message);
    };
    auto seen = recoveries_.load();  // before sending: a recovery from here on may drop what is sent
    send_mine();
    std::unique_lock l(m_);
    auto& got = exchanged_[key];
    got.resize(static_cast<std::size_t>(p_));
    const auto complete = [&] {
        for (int r = 0; r < p_; ++r)
            if (r != me_ && !dead(r) && got[static_cast<std::size_t>(r)].empty()) return false;
        return true;
    };
    // A recovery may drop messages in flight, ours among them: they are
    // sent again by this thread (the service's own thread, which sends the
    // kept ones, does not run yet during the first exchange).
    while (!complete()) {
        cv_.wait(l, [&] { return complete() || recoveries_.load() != seen; });
        if (recoveries_.load() == seen) continue;
        seen = recoveries_.load();
        l.unlock();
        send_mine();
        l.lock();
    }
    std::vector<std::vector<char>> out = std::move(got);
    for (auto& part : out)
        if (!part.empty()) part.pop_back();  // the byte that marks a part as given
    out[static_cast<std::size_t>(me_)] = std::move(mine);
    exchanged_.erase(key);
    exchanges_done_ = std::max(exchanges_done_, key + 1);
    return out;
}

void pgas_service::add_array(std::uint64_t uid, std::weak_ptr<message_path> path) {
    std::lock_guard l(arrays_m_);
    arrays_[uid] = std::move(path);
}

void pgas_service::remove_array(std::uint64_t uid) {
    std::lock_guard l(arrays_m_);
    arrays_.erase(uid);
}

void pgas_service::send_array_message(int dest, std::uint64_t uid, std::vector<char> bytes,
                                      std::function<void()> sent) {
    head h{head::magic_value, kind::array, uid, 0, static_cast<std::uint32_t>(bytes.size())};
    std::vector<char> start(sizeof h);
    std::memcpy(start.data(), &h, sizeof h);
    auto kept = std::make_shared<std::vector<char>>(std::move(bytes));
    send(dest, std::move(start), {{kept->data(), kept->size()}},
         [kept, sent = std::move(sent)](bool) {
             if (sent) sent();
         },
         epoch());
}

// A message of an array's message path: to that array, outside m_,
// decoded from the engine's bytes (no copy of the payload on the way).
void pgas_service::to_array(int source, std::uint64_t uid, const char* data, std::size_t size) {
    std::shared_ptr<message_path> path;
    {
        std::lock_guard l(arrays_m_);
        if (auto it = arrays_.find(uid); it != arrays_.end()) path = it->second.lock();
    }
    auto m = decode_message(data, size);
    if (!m || m->uid != uid) {
        std::lock_guard l(m_);
        ++malformed_;
        return;
    }
    if (path) path->on_message(source, *m);  // else destroyed here, or not made yet: it is asked again
}

void pgas_service::on_message(int source, std::vector<char>&& bytes, std::size_t offset) {
    head h{};
    if (offset <= bytes.size() && bytes.size() - offset >= sizeof h) std::memcpy(&h, bytes.data() + offset, sizeof h);
    const std::size_t at = offset + sizeof h;
    if (h.magic == head::magic_value && h.what == kind::array && at <= bytes.size() && bytes.size() - at == h.payload &&
        source >= 0 && source < p_)
        return to_array(source, h.key, bytes.data() + at, bytes.size() - at);
    auto d = decode(bytes, offset);
    std::lock_guard l(m_);
    if (!d || source < 0 || source >= p_) {
        ++malformed_;
        return;
    }
    if (d->h.what == kind::exchange) {
        if (d->h.key < exchanges_done_) return;  // sent again after a recovery: had it
        auto& got = exchanged_[d->h.key];
        if (got.size() < static_cast<std::size_t>(p_)) got.resize(static_cast<std::size_t>(p_));
        // An empty part is sent as one byte more: "given" must differ from "not yet".
        got[static_cast<std::size_t>(source)] = std::move(d->payload);
        got[static_cast<std::size_t>(source)].push_back(1);
    } else {
        if (d->h.key < barrier_seq_) return;  // a barrier that ended here
        steps_seen_[d->h.key].insert({static_cast<int>(d->h.step), source});
    }
    cv_.notify_all();
}

void pgas_service::on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                               const std::vector<std::vector<char>>&) {
    // A replaced rank runs on a new process that holds none of the copies:
    // for the arrays it is dead as well.
    bool changed = false;
    for (const auto* list : {&replaced, &lost})
        for (int r : *list)
            if (r >= 0 && r < p_ && dead_[static_cast<std::size_t>(r)].exchange(1) == 0) {
                death_us_[static_cast<std::size_t>(r)].store(now_us());
                changed = true;
            }
    // Messages in flight may have been dropped: send ours again, also when
    // nobody new died.
    {
        std::lock_guard l(m_);
        if (changed) deaths_.fetch_add(1);
        recoveries_.fetch_add(1);
        cv_.notify_all();
    }
    {
        std::lock_guard l(jobs_m_);
        pending_ = true;
    }
    jobs_cv_.notify_all();
}

void pgas_service::resend_after_recovery() {
    std::map<std::uint64_t, std::vector<char>> parts;
    std::uint64_t last_barrier = 0;
    {
        std::lock_guard l(m_);
        parts = my_parts_;
        last_barrier = barrier_seq_.load();
    }
    for (auto& [key, mine] : parts) {
        const auto message = encode({head::magic_value, kind::exchange, key, 0, 0}, mine);
        for (int r = 0; r < p_; ++r)
            if (r != me_ && !dead(r)) send_to(r, message);
    }
    // The barrier that ended here last: others may still wait in it, for
    // this rank as the substitute of a dead one. (The barrier under way is
    // sent again by the thread waiting in it.)
    if (last_barrier > 0) post_steps(last_barrier - 1, 0, hypercube_steps(p_) - 1);
    if (mail_)
        for (int r = 0; r < p_; ++r)
            if (dead(r)) mail_->forget_name_of(r);
}

std::shared_ptr<void> pgas_service::on_deaths(std::function<void()> job) {
    std::lock_guard l(listeners_m_);
    const auto id = next_listener_++;
    listeners_[id] = std::move(job);
    return std::shared_ptr<void>(nullptr, [this, id](void*) {
        std::lock_guard l2(listeners_m_);
        listeners_.erase(id);
    });
}

void pgas_service::run_jobs() {
    std::unique_lock l(jobs_m_);
    while (true) {
        jobs_cv_.wait(l, [&] { return pending_ || stop_; });
        if (stop_) return;
        pending_ = false;
        l.unlock();
        resend_after_recovery();
        {
            // Under the lock, so that a handle destroyed meanwhile waits
            // until its job has returned.
            std::lock_guard jobs(listeners_m_);
            for (auto& [id, job] : listeners_) job();
        }
        l.lock();
    }
}

}  // namespace rampart::pgas::detail
