// Loads: which holder each wanted block is asked of (routing), the requests
// and their replies, and blocks copied from this rank's own holdings.

#include "store_impl.hpp"

namespace rampart::store {

using comm::segment;
using detail::head;
using detail::kind;
using detail::max_message_bytes;

std::optional<std::vector<segment>> store::impl::find(
    std::uint64_t version, const std::vector<id_range>& ranges,
    std::vector<std::shared_ptr<const std::vector<char>>>& keep) const {
    auto v = held_.find(version);
    if (v == held_.end()) return std::nullopt;
    std::vector<segment> out;
    for (const id_range& r : ranges) {
        for (std::uint64_t id = r.first, end = r.first + r.count; id < end;) {
            auto it = v->second.upper_bound(id);
            if (it == v->second.begin()) return std::nullopt;
            --it;
            const piece& pc = it->second;
            if (id >= it->first + pc.count) return std::nullopt;
            const std::uint64_t stop = std::min(end, it->first + pc.count);
            out.push_back({pc.buf->data() + pc.offset + (id - it->first) * block_bytes_, (stop - id) * block_bytes_});
            keep.push_back(pc.buf);
            id = stop;
        }
    }
    return out;
}

// Keeps the blocks of `ids` of `version`, put by submit `op` (0: a repair),
// from `buf` at `offset` on, in the order of `ids`.
void store::impl::hold(std::uint64_t version, std::uint64_t op, const std::vector<id_range>& ids,
                       std::shared_ptr<const std::vector<char>> buf, std::size_t offset) {
    for (const id_range& r : ids) {
        held_[version][r.first] = piece{r.count, buf, offset, op};
        offset += r.count * block_bytes_;
    }
}

bool store::impl::copy_local(const wanted& w) {
    std::vector<std::shared_ptr<const std::vector<char>>> keep;
    auto segs = find(op_version_, {w.ids}, keep);
    if (!segs) return false;
    std::size_t at = w.out;
    for (const segment& s : *segs) {
        std::memcpy(out_ + at, s.data, s.bytes);
        at += s.bytes;
    }
    return true;
}

// Each part goes to a surviving holder not tried yet: this rank if it holds
// a copy, else a random one; consecutive parts whose holders include the one
// chosen last go to it too, so that a holder gets one request for a run of
// blocks (the paper's IV-A).
void store::impl::route(std::vector<wanted> parts) {
    const placement& where = placements_.at(op_version_);
    get_drafts drafts;
    for (wanted& w : parts)
        for (const placement_unit& u : where.units(w.ids.first, w.ids.count))
            route_unit(u, {{u.first_id, u.count}, w.out + (u.first_id - w.ids.first) * block_bytes_, w.tried}, drafts);
    for (const std::uint64_t id : drafts.asked) {
        request& rq = outstanding_[id];
        head hd;
        hd.what = kind::get;
        hd.op = op_;
        hd.request = id;
        hd.version = op_version_;
        std::vector<id_range> ranges;
        for (auto& w : rq.parts) ranges.push_back(w.ids);
        rq.head = detail::encode(hd, ranges);
        send_request(id);
    }
}

// The holders not tried yet of a unit's copies: those that surely have the
// blocks, or else those that have them only if a repair has reached them (a
// substitute for a lost rank, a replaced rank), which say so if not.
std::vector<int> store::impl::candidates_for(const placement_unit& u, const std::vector<char>& tried) const {
    const placement& where = placements_.at(op_version_);
    std::vector<int> sure, maybe;
    for (int k = 0; k < r_; ++k) {
        const int original = where.holder_of_copy(u.first_holder, k);
        const int h = resolve(original, lost_);
        if (tried[static_cast<std::size_t>(h)] || std::find(sure.begin(), sure.end(), h) != sure.end()) continue;
        const auto m = std::find(maybe.begin(), maybe.end(), h);
        if (h == original && usable(h, op_version_)) {
            if (m != maybe.end()) maybe.erase(m);  // a substitute for another copy, and a holder itself
            sure.push_back(h);
        } else if (m == maybe.end()) {
            maybe.push_back(h);
        }
    }
    return sure.empty() ? maybe : sure;
}

// A copy here is a memory copy. Else long runs (no permutation) are cut into
// slices, each from a random holder, so that all holders serve (the paper
// sends a run to one holder); a unit of its own goes to the holder asked last
// if it can, so that consecutive blocks go in one request, else to a random
// one.
void store::impl::route_unit(const placement_unit& u, wanted unit_part, get_drafts& drafts) {
    constexpr std::uint64_t slice_bytes = 1 << 20;
    const std::vector<int> candidates = candidates_for(u, unit_part.tried);
    if (candidates.empty()) {
        lost_ids_.push_back(unit_part.ids);
        return;
    }
    const auto has = [&](int q) { return std::find(candidates.begin(), candidates.end(), q) != candidates.end(); };
    const std::uint64_t slice =
        has(me_) ? u.count : std::max<std::uint64_t>(1, slice_bytes / static_cast<std::uint64_t>(block_bytes_));
    for (std::uint64_t at = 0; at < u.count; at += slice) {
        wanted part{
            {u.first_id + at, std::min(slice, u.count - at)}, unit_part.out + at * block_bytes_, unit_part.tried};
        const int h = has(me_) ? me_
                      : u.count <= slice && has(drafts.last)
                          ? drafts.last
                          : candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
        drafts.last = h;
        if (h != me_) {
            add_to_get(h, std::move(part), drafts);
        } else if (!copy_local(part)) {
            part.tried[static_cast<std::size_t>(me_)] = 1;
            route({part});
        }
    }
}

// A long part goes in a request that covers one run of ids, so that its
// reply is one piece on both sides and MPI copies it once, holder to output;
// short ones to the same holder share one request.
void store::impl::add_to_get(int holder, wanted part, get_drafts& drafts) {
    constexpr std::uint64_t alone_bytes = 64 << 10;
    const std::uint64_t part_bytes = part.ids.count * block_bytes_;
    const bool alone = part_bytes >= alone_bytes;
    auto [it, fresh] = drafts.open.try_emplace({holder, alone}, 0);
    if (!fresh) {
        const request& rq = outstanding_[it->second];
        const wanted& back = rq.parts.back();
        fresh =
            (alone && back.ids.first + back.ids.count != part.ids.first) || rq.bytes + part_bytes > max_message_bytes;
    }
    if (fresh) {
        it->second = new_reply_number();
        request& rq = outstanding_[it->second];
        rq.dest = holder;
        rq.what = kind::get;
        drafts.asked.push_back(it->second);
    }
    outstanding_[it->second].bytes += part_bytes;
    outstanding_[it->second].parts.push_back(std::move(part));
}

// Loads into `into` if given (it must hold exactly the blocks), else into
// `vec`, sized here.
void store::impl::load(std::span<const id_range> ranges, std::vector<char>* vec, std::span<std::byte> into) {
    std::unique_lock l(m_);
    await_outcome(l);
    const std::uint64_t n = placements_.count(committed_) ? placements_.at(committed_).blocks() : 0;
    std::string invalid = detail::check_ranges({ranges.begin(), ranges.end()}, n);
    if (!invalid.empty() && committed_ == 0) invalid += " (nothing was submitted)";
    const std::uint64_t bytes = invalid.empty() ? bytes_of(ranges) : 0;
    if (invalid.empty() && !vec && into.size() != bytes)
        invalid = "the memory given holds " + std::to_string(into.size()) + " bytes, the blocks asked for " +
                  std::to_string(bytes);
    begin_op(committed_);
    if (invalid.empty()) {
        if (vec) vec->resize(bytes);
        start_loading(ranges, vec ? vec->data() : reinterpret_cast<char*>(into.data()));
    }
    cv_.wait(l, [&] { return outstanding_.empty(); });
    send_done();
    cv_.wait(l, [&] { return everyone_done() && in_flight_ == 0; });
    out_ = nullptr;
    end_op();
    if (!invalid.empty()) throw rampart::invalid_argument("rampart::store::load: " + invalid);
    throw_if_lost("rampart::store::load");
}

// Asks for the blocks of `ranges` into `out`, in their order (it holds them).
void store::impl::start_loading(std::span<const id_range> ranges, char* out) {
    std::uint64_t bytes = 0;
    std::vector<wanted> parts;
    for (const id_range& r : ranges) {
        parts.push_back({r, bytes, std::vector<char>(static_cast<std::size_t>(p_), 0)});
        bytes += r.count * block_bytes_;
    }
    out_ = out;
    if (!parts.empty()) route(std::move(parts));
}

void store::impl::throw_if_lost(const char* what) {
    if (lost_ids_.empty()) return;
    auto lost = detail::merged(lost_ids_);
    throw store_error(std::string(what) + ": every copy of blocks " + detail::ids_text(lost) + " is lost", lost);
}

std::vector<char> store::impl::fetch(std::span<const id_range> ranges) {
    std::unique_lock l(m_);
    if (in_op_) throw rampart::invalid_argument("rampart::store: a fetch during a collective operation");
    const std::uint64_t n = placements_.count(committed_) ? placements_.at(committed_).blocks() : 0;
    if (std::string invalid = detail::check_ranges({ranges.begin(), ranges.end()}, n); !invalid.empty())
        throw rampart::invalid_argument("rampart::store: fetch: " + invalid);
    op_version_ = committed_;
    lost_ids_.clear();
    std::vector<char> out(bytes_of(ranges));
    busy(1);
    start_loading(ranges, out.data());
    cv_.wait(l, [&] { return outstanding_.empty() && in_flight_ == 0; });
    busy(-1);
    out_ = nullptr;
    throw_if_lost("rampart::store: fetch");
    return out;
}

// The reply to get `id` came into the output: all of it (done), nothing (a
// data message says what the holder has), or something else (malformed:
// asked elsewhere). A failed receive is asked again after the recovery.
void store::impl::on_reply(std::uint64_t id, std::size_t expected, bool ok, std::size_t got) {
    std::lock_guard l(m_);
    --in_flight_;
    auto it = outstanding_.find(id);
    if (ok && got != 0 && it != outstanding_.end()) {
        if (got == expected) {
            outstanding_.erase(it);
        } else {
            ++counters_.malformed;
            std::vector<wanted> again;
            ask_elsewhere(it->second, again);
            outstanding_.erase(it);
            route(std::move(again));
        }
    }
    cv_.notify_all();
}

}  // namespace rampart::store
