// The replicated store, after sections IV-A and IV-B of "ReStore: In-Memory
// REplicated STORagE for Rapid Recovery in Fault-Tolerant Algorithms"
// (Hübner et al., FTXS 2022). Requests and copies travel as service messages
// of the communication engine: the engine thread answers other ranks'
// requests from this rank's holdings while the user's thread waits in submit
// or load, and tells the store about failures so that it asks other copies.
// This file: the store object, its checks, and how requests are sent. How a
// submit commits is in submit_protocol.cpp, loads in load.cpp, the handlers
// of other ranks' messages in message_handlers.cpp, recoveries and repairs
// in store_recovery.cpp.

#include "store_impl.hpp"

namespace rampart::store {

using comm::segment;
using detail::head;
using detail::kind;
using detail::max_message_bytes;

std::string detail::range_text(std::uint64_t from, std::uint64_t to) {
    std::string s(1, '[');
    s += std::to_string(from);
    s += ", ";
    s += std::to_string(to);
    s += ')';
    return s;
}

std::string detail::ids_text(const std::vector<id_range>& rs) {
    std::string s;
    for (std::size_t i = 0; i < rs.size() && i < 8; ++i) {
        if (i) s += ", ";
        s += range_text(rs[i].first, rs[i].first + rs[i].count);
    }
    if (rs.size() > 8) s += ", ... (" + std::to_string(rs.size()) + " ranges)";
    return s;
}

std::string detail::check_ranges(std::vector<id_range> rs, std::uint64_t n) {
    std::sort(rs.begin(), rs.end(), [](auto& a, auto& b) { return a.first < b.first; });
    const auto text = [](const id_range& r) { return range_text(r.first, r.first + r.count); };
    for (std::size_t i = 0; i < rs.size(); ++i) {
        if (rs[i].count == 0) return "an empty range at block " + std::to_string(rs[i].first);
        if (rs[i].first >= n || rs[i].count > n - rs[i].first)
            return "blocks " + text(rs[i]) + " are not inside [0, " + std::to_string(n) + ")";
        if (i > 0 && rs[i - 1].first + rs[i - 1].count > rs[i].first)
            return "ranges " + text(rs[i - 1]) + " and " + text(rs[i]) + " overlap";
    }
    return "";
}

std::optional<detail::recovery_facts> detail::read_facts(const std::vector<char>& state) {
    recovery_facts f;
    if (state.size() < sizeof f) return std::nullopt;  // no such store there
    std::memcpy(&f, state.data(), sizeof f);
    return f;
}

store::impl::impl(std::size_t block_bytes, options o) : block_bytes_(block_bytes), opts_(o) {
    me_ = comm::rank();
    p_ = comm::size();
    r_ = o.replicas == 0 ? std::min(4, p_) : o.replicas;
    if (block_bytes == 0) throw rampart::invalid_argument("rampart::store: a block size of 0 bytes");
    if (r_ < 1 || r_ > p_)
        throw rampart::invalid_argument("rampart::store: " + std::to_string(o.replicas) + " copies on " +
                                        std::to_string(p_) + " ranks (need 1 <= r <= ranks)");
    if (o.permutation_range_bytes % block_bytes != 0)
        throw rampart::invalid_argument(
            "rampart::store: permutation ranges of " + std::to_string(o.permutation_range_bytes) +
            " bytes are not a whole number of " + std::to_string(block_bytes) + "-byte blocks");
    range_blocks_ = o.permutation_range_bytes / block_bytes;
    order_ = node_order(comm::nodes_at_start());
    rng_.seed(o.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(me_));
    lost_.assign(static_cast<std::size_t>(p_), 0);
    holds_from_.assign(static_cast<std::size_t>(p_), 0);
    absent_until_.assign(static_cast<std::size_t>(p_), 0);
    for (int l : recovery::lost_ranks()) lost_[static_cast<std::size_t>(l)] = 1;
}

// --- sending -------------------------------------------------------------

void store::impl::send_request(std::uint64_t id) {
    auto it = outstanding_.find(id);
    request& rq = it != outstanding_.end() ? it->second : repairs_.at(id);
    std::weak_ptr<impl> self = weak_from_this();
    const std::uint64_t now = epoch();  // one for the receive and its get
    if (rq.what == kind::get) {
        // The blocks come straight into the output, before the get leaves.
        std::vector<comm::receive_segment> into;
        std::size_t bytes = 0;
        for (const wanted& w : rq.parts) {
            char* at = out_ + w.out;
            const std::size_t n = w.ids.count * block_bytes_;
            if (!into.empty() && static_cast<char*>(into.back().data) + into.back().bytes == at)
                into.back().bytes += n;
            else
                into.push_back({at, n});
            bytes += n;
        }
        expect_reply(
            rq.dest, id, std::move(into),
            [self, id, bytes](bool ok, std::size_t got) {
                if (auto s = self.lock()) s->on_reply(id, bytes, ok, got);
            },
            now);
        ++in_flight_;  // after the push, which throws once the runtime is down (m_ holds back the callback)
    }
    send(
        rq.dest, rq.head, rq.data,
        [self](bool) {
            if (auto s = self.lock()) {
                std::lock_guard l(s->m_);
                --s->in_flight_;
                s->cv_.notify_all();
            }
        },
        now);
    ++in_flight_;
}

void store::impl::add_put(std::map<int, std::vector<put_draft>>& puts, int dest, id_range ids,
                          const std::vector<segment>& data,
                          const std::vector<std::shared_ptr<const std::vector<char>>>& keep) {
    auto& drafts = puts[dest];
    const std::uint64_t bytes = ids.count * block_bytes_;
    if (drafts.empty() || drafts.back().rq.bytes + bytes > max_message_bytes) drafts.emplace_back();
    request& rq = drafts.back().rq;
    rq.dest = dest;
    rq.what = kind::put;
    rq.data.insert(rq.data.end(), data.begin(), data.end());
    rq.keep.insert(rq.keep.end(), keep.begin(), keep.end());
    rq.bytes += bytes;
    drafts.back().ids.push_back(ids);
}

void store::impl::send_puts(std::map<int, std::vector<put_draft>>& puts, std::uint64_t op, std::uint64_t version,
                            std::uint64_t total, std::map<std::uint64_t, request>& into) {
    for (auto& [dest, drafts] : puts)
        for (put_draft& d : drafts) {
            head hd;
            hd.what = kind::put;
            hd.op = op;
            hd.version = version;
            hd.total = total;
            hd.request = new_reply_number();
            d.rq.head = detail::encode(hd, d.ids);
            into[hd.request] = std::move(d.rq);
            send_request(hd.request);
        }
}

// --- the public face -----------------------------------------------------

store::store(std::size_t block_bytes, options opts) : impl_(std::make_shared<impl>(block_bytes, opts)) {
    impl_->start();  // joins the others' stores (on_attach) when a recovery came before
}

store::~store() {
    impl_->close();
    static std::mutex m;
    static std::vector<std::shared_ptr<impl>> closed;  // registered with the engine until the process ends
    std::lock_guard l(m);
    closed.push_back(std::move(impl_));
}

std::uint64_t store::submit(std::span<const block_run> runs, std::uint64_t total_blocks) {
    return impl_->submit(runs, total_blocks);
}

std::uint64_t store::submit(std::uint64_t first_id, std::uint64_t count,
                            const std::function<void(std::uint64_t, std::span<std::byte>)>& serialize,
                            std::uint64_t total_blocks) {
    std::vector<std::byte> bytes(count * impl_->block_bytes_);
    for (std::uint64_t i = 0; i < count; ++i)
        serialize(first_id + i, std::span<std::byte>(bytes.data() + i * impl_->block_bytes_, impl_->block_bytes_));
    return submit(first_id, bytes, total_blocks);
}

std::vector<char> store::load(std::span<const id_range> ranges) {
    std::vector<char> out;
    impl_->load(ranges, &out, {});
    return out;
}
void store::load(std::span<const id_range> ranges, std::span<std::byte> into) { impl_->load(ranges, nullptr, into); }
std::uint64_t store::restore_replication() { return impl_->restore_replication(); }
std::vector<char> store::fetch(std::span<const id_range> ranges) { return impl_->fetch(ranges); }
void store::tag_next_operation(std::uint64_t tag) { impl_->tag_next_operation(tag); }
bool store::done_without_me(std::uint64_t tag) const { return impl_->done_without_me(tag); }
std::uint64_t store::version() const { return impl_->version(); }
std::uint64_t store::blocks() const { return impl_->blocks(); }
std::size_t store::block_bytes() const noexcept { return impl_->block_bytes_; }
int store::replicas() const noexcept { return impl_->r_; }
placement store::placement_of(std::uint64_t blocks) const { return impl_->place(blocks); }
store_counters store::counters() const { return impl_->counters(); }

}  // namespace rampart::store
