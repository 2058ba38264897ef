// With three replicas or more, a message reaches the program only once a
// majority of this rank's replicas received the same bytes: each replica
// tells its siblings the hash of its copy and waits for enough of theirs.
// A replica outvoted on what it received holds a corrupted copy: it dies
// before its program sees it (and is recovered from as a crash), so that
// corruption never spreads into the state of a replica. (The senders'
// replicas compare the same copies through the acknowledgements and kill
// the sender of an outvoted copy.)

#include "protocol.hpp"

#include "report.hpp"

namespace rampart::replica::detail {

void protocol::vote_on(const std::shared_ptr<inbound>& in, std::uint64_t hash) {
    if (layout_.replicas() < 3) return accept(*in);  // two cannot outvote: the senders detect
    for (int l = 0; l < layout_.replicas(); ++l)
        if (l != replica_ && layout_.alive(rank_, l))
            send_control(layout_.process(rank_, l), vote_tag, static_cast<std::uint64_t>(in->source), in->number, hash);
    const std::pair<int, std::uint64_t> key{in->source, in->number};
    vote& v = votes_[key];
    v.in = in;
    v.own = hash;
    check_vote(key);
}

void protocol::on_vote(int from, std::uint64_t source, std::uint64_t number, std::uint64_t hash) {
    if (layout_.rank_of(from) != rank_ || source >= static_cast<std::uint64_t>(layout_.ranks()))
        abort_job(3,
                  "a vote from process " + std::to_string(from) + ", not a replica of rank " + std::to_string(rank_));
    const std::pair<int, std::uint64_t> key{static_cast<int>(source), number};
    votes_[key].others.emplace_back(layout_.replica_of(from), hash);
    check_vote(key);
}

// Decided once the copies that agree with this one are a majority of the
// live replicas (accepted), or the others agree on something else without
// it (outvoted: this process dies).
void protocol::check_vote(const std::pair<int, std::uint64_t>& key) {
    auto it = votes_.find(key);
    if (it == votes_.end()) return;
    vote& v = it->second;
    int live_others = 0;
    for (auto& [l, h] : v.others) live_others += layout_.alive(rank_, l) ? 1 : 0;
    const int live = layout_.live_replicas(rank_);
    if (!v.decided && v.in) {
        std::map<std::uint64_t, int> count{{v.own, 1}};
        for (auto& [l, h] : v.others)
            if (layout_.alive(rank_, l)) ++count[h];
        const int need = live / 2 + 1;
        if (count[v.own] >= need) {
            v.decided = true;
            accept(*v.in);
        } else if (live_others + 1 >= live) {
            ++corruptions_detected;
            for (auto& [h, n] : count)
                if (n >= need) die();  // outvoted: this copy is the corrupted one
            abort_job(4, "silent data corruption detected and not correctable (no majority): message " +
                             std::to_string(key.second) + " from rank " + std::to_string(key.first) + " to rank " +
                             std::to_string(rank_) + ", received differently by its " + std::to_string(live) +
                             " replicas" + divergence_causes(flip_rate_ > 0.0));
        }
    }
    // Forgotten once decided and every live sibling has voted.
    if (v.decided && live_others + 1 >= live) votes_.erase(it);
}

void protocol::check_votes() {
    std::vector<std::pair<int, std::uint64_t>> keys;
    for (auto& [key, v] : votes_) keys.push_back(key);
    for (auto& key : keys) check_vote(key);
}

void protocol::accept(inbound& in) {
    in.accepted = true;
    if (in.target) deliver(in);
}

}  // namespace rampart::replica::detail
