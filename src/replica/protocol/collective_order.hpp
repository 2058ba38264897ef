#pragma once
// The order that the library's blocking collectives put on point-to-point
// messages, kept after a crash.
//
// A message that rank i sends to rank j after a collective both take part
// in cannot reach a receive that j's program posted before it: MPI may make
// any blocking collective synchronizing, so a correct program relies on no
// less. A replica set that lost a member no longer keeps this by itself:
// - the replica that sends in the place of the dead one keeps the pace of
//   its own set, which may be collectives ahead. Its copy to the broken set
//   waits until its receiver has entered the collectives the sender had
//   passed, or a receive from any source in an earlier phase there could
//   take it;
// - a member of the broken set that gets a collective's data from that
//   replica passes the collective at the other set's pace, before members
//   of its own set have entered it. It waits until they have, before its
//   program goes on to send them what follows.
//
// Collectives on one communicator are called in the same order by all its
// members, and a correct program calls the collectives of two communicators
// that both ranks are in in the same order on both (or it could deadlock),
// so one count per pair of ranks says it all: the collectives on
// communicators holding both. Nonblocking collectives are not counted: a
// program may receive before its MPI_Ibarrier what another rank sent after
// its own, and a copy held for it would never come.

#include <cstdint>
#include <vector>

namespace rampart::replica::detail {

class collective_order {
public:
    void size(int ranks, int processes) {
        entered_with_.assign(static_cast<std::size_t>(ranks), 0);
        passed_with_.assign(static_cast<std::size_t>(ranks), 0);
        reported_.assign(static_cast<std::size_t>(processes), 0);
    }
    /// This process enters, or has passed, a blocking collective among
    /// these logical ranks.
    void entered(const std::vector<int>& ranks) {
        for (int r : ranks) ++entered_with_[static_cast<std::size_t>(r)];
    }
    void passed(const std::vector<int>& ranks) {
        for (int r : ranks) ++passed_with_[static_cast<std::size_t>(r)];
    }
    /// Collectives shared with `rank` that this process has entered, or passed.
    std::uint64_t entered_with(int rank) const { return entered_with_[static_cast<std::size_t>(rank)]; }
    std::uint64_t passed_with(int rank) const { return passed_with_[static_cast<std::size_t>(rank)]; }

    /// `process` said it has entered `count` collectives shared with this rank.
    void on_report(int process, std::uint64_t count) {
        auto& c = reported_[static_cast<std::size_t>(process)];
        if (count > c) c = count;
    }
    /// Whether `process` has entered `count` collectives shared with this
    /// rank (as it reported): a copy sent after that many passed may go to
    /// it, and this process may leave its collective number `count`.
    bool has_entered(int process, std::uint64_t count) const {
        return count == 0 || reported_[static_cast<std::size_t>(process)] >= count;
    }

private:
    std::vector<std::uint64_t> entered_with_, passed_with_;  // per logical rank
    std::vector<std::uint64_t> reported_;                    // per process, as it said
};

}  // namespace rampart::replica::detail
