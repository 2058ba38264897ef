// The callers' side of the message path (message_path.hpp): an operation
// is asked of the block's primary until an answer comes, again after every
// death and recovery (and every 50 ms, should a message be lost another
// way); a dead primary's shadow is asked next, and when neither is known
// alive every living rank is asked who holds the block.

#include "message_path.hpp"
#include "pgas_service.hpp"

#include <rampart/pgas/errors.hpp>
#include <rampart/task/errors.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace rampart::pgas::detail {

namespace {

using clock = std::chrono::steady_clock;
constexpr auto ask_again_after = std::chrono::milliseconds(50);
constexpr auto give_up_after = std::chrono::seconds(60);
constexpr int spins_before_sleeping = 2000;

message request_of(op_kind op, const patch& block, const patch& q) {
    message m;
    m.what = message_kind::request;
    m.op = op;
    m.region = {q.lo[0] - block.lo[0], q.hi[0] - block.lo[0], q.lo[1] - block.lo[1], q.hi[1] - block.lo[1]};
    return m;
}

// The engine polls without pausing while an operation waits for its answer.
struct busy_while {
    pgas_service& s;
    explicit busy_while(pgas_service& svc) : s(svc) { s.busy_for_operations(1); }
    ~busy_while() { s.busy_for_operations(-1); }
};

}  // namespace

void message_path::on_answer(const message& m) {
    if (m.hint < -1 || m.hint >= svc_.size() || m.status > 2) return;  // malformed
    std::lock_guard l(client_m_);
    auto it = waiting_.find(m.seq);
    if (it == waiting_.end() || it->second.answered) return;  // an answer to an earlier asking
    it->second.answered = true;
    it->second.status = m.status;
    it->second.hint = m.hint;
    it->second.result = m.result;
    if (it->second.flag) it->second.flag->store(true, std::memory_order_release);
    client_cv_.notify_all();
}

// Until the answer of `seq` comes (true), or a death or recovery since the
// asking, or ask_again_after (false: ask again). Spins (yielding) for a
// while first: an answer usually comes within microseconds, sooner than a
// sleeping thread wakes.
bool message_path::wait_answer(std::uint64_t seq, const std::atomic<bool>& flag, std::uint64_t recoveries,
                               std::uint64_t deaths) {
    for (int spins = 0; spins < spins_before_sleeping; ++spins) {
        if (flag.load(std::memory_order_acquire)) return true;
        std::this_thread::yield();
    }
    const auto until = clock::now() + ask_again_after;
    std::unique_lock l(client_m_);
    for (;;) {
        if (waiting_[seq].answered) return true;
        if (svc_.recoveries() != recoveries || svc_.deaths() != deaths || clock::now() > until) return false;
        client_cv_.wait_for(l, std::chrono::milliseconds(1));
    }
}

std::vector<char> message_path::call(int b, const patch& asked, message request) {
    busy_while busy(svc_);
    request.uid = uid_;
    request.block = b;
    request.seq = ++next_seq_;
    const auto seq = request.seq;
    std::atomic<bool> answered{false};
    {
        std::lock_guard l(client_m_);
        waiting_[seq].flag = &answered;
    }
    struct forget {
        message_path& p;
        std::uint64_t seq;
        ~forget() {
            std::lock_guard l(p.client_m_);
            p.waiting_.erase(seq);
        }
    } done{*this, seq};
    auto give_up = clock::now() + give_up_after;
    for (auto seen = svc_.recoveries(); clock::now() < give_up;) {
        if (svc_.recoveries() != seen) {  // a recovery: its time does not count
            seen = svc_.recoveries();
            give_up = clock::now() + give_up_after;
        }
        int target = -1;
        {
            std::lock_guard l(client_m_);
            target = primary_[static_cast<std::size_t>(b)];
            request.low = waiting_.begin()->first;  // the answers below it arrived
        }
        if (target < 0 || svc_.dead(target)) target = locate(b, asked);
        const auto recoveries = svc_.recoveries(), deaths = svc_.deaths();
        if (target == me_) {
            on_request(me_, request);
        } else {
            send(target, request);
        }
        if (!wait_answer(seq, answered, recoveries, deaths)) continue;
        waiting w;
        {
            std::lock_guard l(client_m_);
            w = std::exchange(waiting_[seq], waiting{});
            waiting_[seq].flag = &answered;
            answered.store(false, std::memory_order_relaxed);
        }
        if (w.status == static_cast<std::uint32_t>(answer_status::ok)) return std::move(w.result);
        bool pause = false;
        {
            std::lock_guard l(client_m_);
            auto& known = primary_[static_cast<std::size_t>(b)];
            if (w.status == static_cast<std::uint32_t>(answer_status::not_here)) {
                if (known == target) known = -1;  // find out again
            } else if (w.hint >= 0 && !svc_.dead(w.hint)) {
                known = w.hint;  // not the primary: that one is
            } else {
                pause = true;  // a shadow whose primary died, which it will learn soon
            }
        }
        if (pause) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    throw rampart::error("rampart::pgas: array '" + name_ + "': an operation on " + asked.text() +
                         " had no answer within 60 s");
}

// Asks each rank of `to` the message given for it; returns the answers of
// those that lived to give one.
std::map<int, message_path::waiting> message_path::ask_all(std::map<int, message> to) {
    busy_while busy(svc_);
    std::map<int, std::uint64_t> seqs;
    {
        std::lock_guard l(client_m_);
        for (auto& [r, m] : to) {
            m.uid = uid_;
            m.seq = seqs[r] = ++next_seq_;
            waiting_[m.seq] = {};
        }
    }
    std::map<int, waiting> out;
    const auto give_up = clock::now() + give_up_after;
    while (!seqs.empty() && clock::now() < give_up) {
        const auto recoveries = svc_.recoveries(), deaths = svc_.deaths();
        for (const auto& [r, seq] : seqs) {
            if (r == me_) {
                on_message(me_, to[r]);
            } else if (!svc_.dead(r)) {
                send(r, to[r]);
            }
        }
        const auto until = clock::now() + ask_again_after;
        std::unique_lock l(client_m_);
        while (svc_.recoveries() == recoveries && svc_.deaths() == deaths && clock::now() < until) {
            for (auto it = seqs.begin(); it != seqs.end();) {
                auto& w = waiting_[it->second];
                if (w.answered) out[it->first] = std::move(w);
                if (w.answered || svc_.dead(it->first)) {
                    waiting_.erase(it->second);
                    it = seqs.erase(it);
                } else {
                    ++it;
                }
            }
            if (seqs.empty()) break;
            client_cv_.wait_for(l, std::chrono::milliseconds(1));
        }
    }
    std::lock_guard l(client_m_);
    for (const auto& [r, seq] : seqs) waiting_.erase(seq);
    return out;
}

std::array<int, 2> message_path::holders(int b) {
    std::map<int, message> to;
    for (int r = 0; r < svc_.size(); ++r)
        if (!svc_.dead(r)) {
            to[r].what = message_kind::locate;
            to[r].block = b;
        }
    int primary = -1, orphan = -1, shadow = -1;
    for (const auto& [r, w] : ask_all(std::move(to))) {
        if (w.status == 1) primary = r;
        if (w.status == 2) (w.hint < 0 || svc_.dead(w.hint) ? orphan : shadow) = r;
    }
    if (primary < 0) return {orphan, -1};  // a shadow whose primary died takes over when asked
    return {primary, shadow};
}

// Where to ask next when the primary this rank knew is dead: its shadow,
// else whichever rank holds a copy.
int message_path::locate(int b, const patch& asked) {
    {
        std::lock_guard l(client_m_);
        auto& s = shadow_[static_cast<std::size_t>(b)];
        if (s >= 0 && !svc_.dead(s)) {
            primary_[static_cast<std::size_t>(b)] = std::exchange(s, -1);
            return primary_[static_cast<std::size_t>(b)];
        }
    }
    const auto [primary, shadow] = holders(b);
    if (primary < 0) {
        {
            std::lock_guard l(m_);
            if (lost_.insert(b).second) ++counts_.lost_blocks;
        }
        throw data_lost(name_, asked, b, dist_.block_patch(b));
    }
    std::lock_guard l(client_m_);
    primary_[static_cast<std::size_t>(b)] = primary;
    shadow_[static_cast<std::size_t>(b)] = shadow;
    return primary;
}

void message_path::put(int b, const patch& asked, const patch& q, const char* data) {
    auto m = request_of(op_kind::put, dist_.block_patch(b), q);
    m.data.assign(data, data + static_cast<std::size_t>(q.elements()) * ops_.bytes);
    call(b, asked, std::move(m));
}

void message_path::get(int b, const patch& asked, const patch& q, char* out) {
    const auto r = call(b, asked, request_of(op_kind::get, dist_.block_patch(b), q));
    if (r.size() != static_cast<std::size_t>(q.elements()) * ops_.bytes)
        throw rampart::error("rampart::pgas: array '" + name_ + "': a get of " + q.text() + " was answered with " +
                             std::to_string(r.size()) + " bytes");
    std::memcpy(out, r.data(), r.size());
}

void message_path::acc(int b, const patch& asked, const patch& q, const char* data, const void* alpha) {
    auto m = request_of(op_kind::acc, dist_.block_patch(b), q);
    m.data.assign(data, data + static_cast<std::size_t>(q.elements()) * ops_.bytes);
    m.operand.assign(static_cast<const char*>(alpha), static_cast<const char*>(alpha) + ops_.bytes);
    call(b, asked, std::move(m));
}

void message_path::read_inc(int b, const patch& asked, std::array<std::int64_t, 2> index, const void* inc,
                            void* old) {
    auto m = request_of(op_kind::read_inc, dist_.block_patch(b), patch::element(index[0], index[1]));
    m.operand.assign(static_cast<const char*>(inc), static_cast<const char*>(inc) + ops_.bytes);
    const auto r = call(b, asked, std::move(m));
    if (r.size() != ops_.bytes)
        throw rampart::error("rampart::pgas: array '" + name_ + "': a read_inc was answered with " +
                             std::to_string(r.size()) + " bytes");
    std::memcpy(old, r.data(), r.size());
}

bool message_path::every_block_shadowed() {
    const auto alive = svc_.alive();
    if (!shadows_ || std::count(alive.begin(), alive.end(), 1) < 2) return true;
    for (int b = 0; b < dist_.blocks(); ++b) {
        const auto [primary, shadow] = holders(b);
        if (primary >= 0 && shadow < 0) return false;  // (a lost block has neither)
    }
    return true;
}

std::vector<int> message_path::differing_copies() {
    std::vector<int> out;
    for (int b = 0; b < dist_.blocks(); ++b) {
        const auto [primary, shadow] = holders(b);
        if (primary < 0 || shadow < 0) continue;
        std::map<int, message> to;
        for (int r : {primary, shadow}) {
            to[r].what = message_kind::compare;
            to[r].block = b;
        }
        auto copies = ask_all(std::move(to));
        if (copies.size() == 2 && copies[primary].result != copies[shadow].result) out.push_back(b);
    }
    return out;
}

}  // namespace rampart::pgas::detail
