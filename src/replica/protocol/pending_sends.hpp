#pragma once
// The messages of this process to one destination rank whose copies are
// not all confirmed, by number. Numbers are given in order, and messages
// are mostly confirmed in order: a window over consecutive numbers, with
// no allocation per message (a map cost an allocation and a rebalance on
// every send).

#include <cassert>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace rampart::replica::detail {

/// Shared pointers by consecutive numbers: `add` in order, `erase` in any
/// order; the window's front moves past what was erased.
template <class T>
class numbered_window {
public:
    /// `number` is above every number added before.
    void add(std::uint64_t number, std::shared_ptr<T> op) {
        if (ops_.empty()) first_ = number;
        assert(number >= first_ + ops_.size() && "numbers are added in order");
        ops_.resize(static_cast<std::size_t>(number - first_));
        ops_.push_back(std::move(op));
        ++count_;
    }
    /// The message, or null when it is not pending.
    const std::shared_ptr<T>& find(std::uint64_t number) const {
        static const std::shared_ptr<T> none;
        if (number < first_ || number - first_ >= ops_.size()) return none;
        return ops_[static_cast<std::size_t>(number - first_)];
    }
    void erase(std::uint64_t number) {
        if (number < first_ || number - first_ >= ops_.size()) return;
        auto& slot = ops_[static_cast<std::size_t>(number - first_)];
        if (!slot) return;
        slot.reset();
        --count_;
        while (!ops_.empty() && !ops_.front()) {
            ops_.pop_front();
            ++first_;
        }
    }
    bool empty() const { return count_ == 0; }
    /// Calls f(op) for each pending message in order of number.
    template <class F>
    void for_each(F f) const {
        for (const auto& op : ops_)
            if (op) f(op);
    }
    /// The pending messages in order of number (a copy: f may change the window).
    std::vector<std::shared_ptr<T>> list() const {
        std::vector<std::shared_ptr<T>> out;
        out.reserve(count_);
        for_each([&](const std::shared_ptr<T>& op) { out.push_back(op); });
        return out;
    }

private:
    std::uint64_t first_ = 0;  // the number of ops_.front()
    std::deque<std::shared_ptr<T>> ops_;
    std::size_t count_ = 0;
};

struct send_op;
using pending_sends = numbered_window<send_op>;

}  // namespace rampart::replica::detail
