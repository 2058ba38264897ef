// The replicated store, after sections IV-A and IV-B of "ReStore: In-Memory
// REplicated STORagE for Rapid Recovery in Fault-Tolerant Algorithms"
// (Hübner et al., FTXS 2022). Requests and copies travel as service messages of the
// communication engine: the engine thread answers other ranks' requests from
// this rank's holdings while the user's thread waits in submit or load, and
// tells the store about failures so that it asks other copies. How a submit
// commits is in submit_protocol.cpp.

#include "store_impl.hpp"

namespace rampart::store {

using comm::segment;
using detail::head;
using detail::kind;
using detail::max_message_bytes;

std::string detail::ids_text(const std::vector<id_range>& rs) {
    std::string s;
    for (std::size_t i = 0; i < rs.size() && i < 8; ++i)
        s += (i ? ", " : "") + ("[" + std::to_string(rs[i].first) + ", " + std::to_string(rs[i].first + rs[i].count) + ")");
    if (rs.size() > 8) s += ", ... (" + std::to_string(rs.size()) + " ranges)";
    return s;
}

std::string detail::check_ranges(std::vector<id_range> rs, std::uint64_t n) {
    std::sort(rs.begin(), rs.end(), [](auto& a, auto& b) { return a.first < b.first; });
    const auto text = [](const id_range& r) {
        return "[" + std::to_string(r.first) + ", " + std::to_string(r.first + r.count) + ")";
    };
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
        throw rampart::invalid_argument("rampart::store: permutation ranges of " +
                                        std::to_string(o.permutation_range_bytes) +
                                        " bytes are not a whole number of " + std::to_string(block_bytes) +
                                        "-byte blocks");
    range_blocks_ = o.permutation_range_bytes / block_bytes;
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
        expect_reply(rq.dest, id, std::move(into),
            [self, id, bytes](bool ok, std::size_t got) {
                if (auto s = self.lock()) s->on_reply(id, bytes, ok, got);
            },
            now);
        ++in_flight_;  // after the push, which throws once the runtime is down (m_ holds back the callback)
    }
    send(rq.dest, rq.head, rq.data,
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

// --- load ----------------------------------------------------------------

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
    constexpr std::uint64_t slice_bytes = 1 << 20;
    const placement& where = placements_.at(op_version_);
    constexpr std::uint64_t alone_bytes = 64 << 10;
    std::map<std::pair<int, bool>, std::uint64_t> open;  // (holder, long part) -> its request being built
    std::vector<std::uint64_t> asked;   // the requests built, in order
    int last = -1;
    for (wanted& w : parts) {
        for (const placement_unit& u : where.units(w.ids.first, w.ids.count)) {
            wanted piece_part{{u.first_id, u.count}, w.out + (u.first_id - w.ids.first) * block_bytes_, w.tried};
            // Holders that surely have the blocks first; then those that
            // have them only if a repair has reached them (a substitute for
            // a lost rank, a replaced rank), which say so if not.
            std::vector<int> sure, maybe;
            for (int k = 0; k < r_; ++k) {
                const int original = where.holder_of_copy(u.first_holder, k);
                const int h = resolve(original, lost_);
                if (piece_part.tried[static_cast<std::size_t>(h)] || std::find(sure.begin(), sure.end(), h) != sure.end())
                    continue;
                const auto m = std::find(maybe.begin(), maybe.end(), h);
                if (h == original && usable(h, op_version_)) {
                    if (m != maybe.end()) maybe.erase(m);  // a substitute for another copy, and a holder itself
                    sure.push_back(h);
                } else if (m == maybe.end()) {
                    maybe.push_back(h);
                }
            }
            std::vector<int>& candidates = sure.empty() ? maybe : sure;
            if (candidates.empty()) {
                lost_ids_.push_back(piece_part.ids);
                continue;
            }
            // A copy here is a memory copy. Else long runs (no permutation)
            // are cut into slices, each from a random holder, so that all
            // holders serve (the paper sends a run to one holder); a unit
            // of its own goes to the holder asked last if it can, so that
            // consecutive blocks go in one request, else to a random one.
            const auto has = [&](int q) { return std::find(candidates.begin(), candidates.end(), q) != candidates.end(); };
            const std::uint64_t slice =
                has(me_) ? u.count : std::max<std::uint64_t>(1, slice_bytes / static_cast<std::uint64_t>(block_bytes_));
            for (std::uint64_t at = 0; at < u.count; at += slice) {
                wanted part{{u.first_id + at, std::min(slice, u.count - at)}, piece_part.out + at * block_bytes_,
                            piece_part.tried};
                const int h = has(me_)                        ? me_
                              : u.count <= slice && has(last) ? last
                                                              : candidates[std::uniform_int_distribution<std::size_t>(
                                                                    0, candidates.size() - 1)(rng_)];
                last = h;
                if (h == me_) {
                    if (copy_local(part)) continue;
                    part.tried[static_cast<std::size_t>(me_)] = 1;
                    route({part});
                    continue;
                }
                // A long part goes in a request that covers one run of ids,
                // so that its reply is one piece on both sides and MPI copies
                // it once, holder to output; short ones to the same holder
                // share one request.
                const std::uint64_t part_bytes = part.ids.count * block_bytes_;
                const bool alone = part_bytes >= alone_bytes;
                auto [it, fresh] = open.try_emplace({h, alone}, 0);
                if (!fresh) {
                    const request& rq = outstanding_[it->second];
                    const wanted& back = rq.parts.back();
                    fresh = (alone && back.ids.first + back.ids.count != part.ids.first) ||
                            rq.bytes + part_bytes > max_message_bytes;
                }
                if (fresh) {
                    it->second = new_reply_number();
                    request& rq = outstanding_[it->second];
                    rq.dest = h;
                    rq.what = kind::get;
                    asked.push_back(it->second);
                }
                outstanding_[it->second].bytes += part_bytes;
                outstanding_[it->second].parts.push_back(std::move(part));
            }
        }
    }
    for (const std::uint64_t id : asked) {
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

// Loads into `into` if given (it must hold exactly the blocks), else into
// `vec`, sized here.
void store::impl::load(std::span<const id_range> ranges, std::vector<char>* vec, std::span<std::byte> into) {
    std::unique_lock l(m_);
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

// --- the engine thread ---------------------------------------------------

void store::impl::on_message(int source, std::vector<char>&& bytes, std::size_t offset) {
    auto d = detail::decode(bytes.data(), bytes.size(), offset, block_bytes_);
    std::lock_guard l(m_);
    if (!d || source < 0 || source >= p_) {
        ++counters_.malformed;
        return;
    }
    const head& h = d->h;
    std::uint64_t blocks = 0;
    for (auto& r : d->ranges) blocks += r.count;
    switch (h.what) {
    case kind::put: {  // decode checked that the payload is the blocks
        // Not kept: a late repair, a put to a closed store, or a late put
        // of a submit that was abandoned here already (its blocks would
        // shadow those of the next attempt at the version).
        const auto gone = abandoned_.find(h.version);
        const bool late = h.op != 0 && gone != abandoned_.end() && h.op <= gone->second;
        if (h.version >= committed_ && !closed_ && !late)
            hold(h.version, h.op, d->ranges, std::make_shared<const std::vector<char>>(std::move(bytes)),
                 d->payload_offset);
        head a;
        a.what = kind::ack;
        a.op = h.op;
        a.request = h.request;
        send(source, detail::encode(a), {}, [](bool) {}, epoch());
        break;
    }
    case kind::get: {
        // Holding every range asked for, it sends the blocks straight into
        // the asker's output (a reply). Else the reply is empty, and a data
        // message says which ranges are here: a byte per range (1: here, its
        // blocks follow), padded to 8, then the blocks held.
        auto keep = std::make_shared<std::vector<std::shared_ptr<const std::vector<char>>>>();
        if (auto all = find(h.version, d->ranges, *keep)) {
            counters_.blocks_served += blocks;
            reply(source, h.request, std::move(*all), [keep](bool) {}, epoch());
            break;
        }
        const std::size_t flags = (d->ranges.size() + 7) / 8 * 8;
        auto data = std::make_shared<std::pair<std::vector<char>, std::vector<std::shared_ptr<const std::vector<char>>>>>();
        data->first.assign(flags, 0);
        std::vector<segment> segs{{data->first.data(), flags}};
        for (std::size_t i = 0; i < d->ranges.size(); ++i) {
            auto found = find(h.version, {d->ranges[i]}, data->second);
            if (!found) continue;
            data->first[i] = 1;
            segs.insert(segs.end(), found->begin(), found->end());
            counters_.blocks_served += d->ranges[i].count;
        }
        head a;
        a.what = kind::data;
        a.op = h.op;
        a.request = h.request;
        const std::uint64_t now = epoch();  // one for the two messages
        send(source, detail::encode(a), std::move(segs), [data](bool) {}, now);
        reply(source, h.request, {}, [](bool) {}, now);
        break;
    }
    case kind::ack: {
        for (auto* requests : {&outstanding_, &repairs_}) {
            auto it = requests->find(h.request);
            if (it != requests->end() && it->second.what == kind::put && it->second.dest == source) requests->erase(it);
        }
        break;
    }
    case kind::data: {
        auto it = outstanding_.find(h.request);
        if (it == outstanding_.end() || it->second.what != kind::get || it->second.dest != source || !out_)
            return;  // answered already (a request sent again after a failure)
        auto& parts = it->second.parts;
        std::vector<std::uint64_t> counts;
        for (const wanted& w : parts) counts.push_back(w.ids.count);
        const auto here = detail::decode_data(bytes.data() + d->payload_offset, d->payload_bytes, counts, block_bytes_);
        if (!here) {
            ++counters_.malformed;
            return;
        }
        std::size_t at = d->payload_offset + detail::data_flags_bytes(parts.size());
        std::vector<wanted> again;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            wanted& w = parts[i];
            if (!(*here)[i]) {  // not there (a new holder not reached by its repair yet)
                w.tried[static_cast<std::size_t>(source)] = 1;
                again.push_back(std::move(w));
                continue;
            }
            std::memcpy(out_ + w.out, bytes.data() + at, w.ids.count * block_bytes_);
            at += w.ids.count * block_bytes_;
        }
        outstanding_.erase(it);
        if (!again.empty()) {
            ++counters_.requests_rerouted;
            route(std::move(again));
        }
        break;
    }
    case kind::done:
        on_done(source, *d);
        break;
    case kind::ready:
        on_ready(source, h);
        break;
    }
    cv_.notify_all();
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

std::uint64_t store::impl::repair(const std::function<bool(int, int)>& lacks) {
    auto where_it = placements_.find(committed_);
    if (where_it == placements_.end()) return 0;
    const placement& where = where_it->second;
    std::map<int, std::vector<put_draft>> puts;
    std::uint64_t sent = 0;
    for (const placement_unit& u : where.units(0, where.blocks())) {
        std::vector<int> t;
        std::vector<char> needs;
        int sender = -1;
        for (int k = 0; k < r_; ++k) {
            const int original = where.holder_of_copy(u.first_holder, k);
            const int h = resolve(original, lost_);
            if (std::find(t.begin(), t.end(), h) != t.end()) continue;
            t.push_back(h);
            needs.push_back(lacks(h, original));
            if (!needs.back() && sender < 0) sender = h;
        }
        if (sender != me_) continue;  // the first holder with a sure copy sends, the same on every rank
        for (std::uint64_t done = 0; done < u.count; done += max_message_blocks()) {
            const id_range chunk{u.first_id + done, std::min(max_message_blocks(), u.count - done)};
            std::vector<std::shared_ptr<const std::vector<char>>> keep;
            auto segs = find(committed_, {chunk}, keep);
            if (!segs) continue;  // not here after all: this copy stays missing
            for (std::size_t k = 0; k < t.size(); ++k) {
                if (!needs[k] || t[k] == me_) continue;
                add_put(puts, t[k], chunk, *segs, keep);
                sent += chunk.count;
            }
        }
    }
    send_puts(puts, 0, committed_, where.blocks(), repairs_);  // a repair is no collective operation
    counters_.blocks_repaired += sent;
    return sent;
}

void store::impl::on_recovery(const std::vector<int>& replaced, const std::vector<int>& lost,
                              const std::vector<std::vector<char>>& states) {
    std::lock_guard l(m_);
    // The last operation any survivor had begun: replacements join after it.
    std::uint64_t begun = 0;
    for (const auto& st : states)
        if (auto f = detail::read_facts(st)) begun = std::max(begun, f->op);
    for (int q : replaced)
        absent_until_[static_cast<std::size_t>(q)] = std::max(absent_until_[static_cast<std::size_t>(q)], begun);
    const std::vector<char> lost_before = lost_;
    for (int q : lost) lost_[static_cast<std::size_t>(q)] = 1;
    // A new process holds nothing of the versions that exist now.
    for (int q : replaced) holds_from_[static_cast<std::size_t>(q)] = std::max(committed_, op_version_) + 1;
    learn_parts(replaced, lost, states);
    // Messages in flight died with the old communicator: ask again, other
    // holders where the one asked is gone.
    std::vector<wanted> again;
    std::vector<std::uint64_t> resend;
    for (auto* requests : {&outstanding_, &repairs_}) {
        for (auto it = requests->begin(); it != requests->end();) {
            const int dest = it->second.dest;
            if (!lost_[static_cast<std::size_t>(dest)] &&
                std::find(replaced.begin(), replaced.end(), dest) == replaced.end()) {
                resend.push_back(it->first);
                ++it;
                continue;
            }
            if (it->second.what == kind::get) ask_elsewhere(it->second, again);
            it = requests->erase(it);  // a put to a dead or new process: that copy is missing until a repair
        }
    }
    for (std::uint64_t id : resend) send_request(id);
    if (!again.empty()) route(std::move(again));
    resend_words();
    // Restore the replication level of the newest version (paper IV-E): the
    // replaced ranks, and the ranks that hold in place of the newly lost
    // ones, get the copies they lack from the first holder that has them.
    repair([&](int target, int original) {
        if (std::find(replaced.begin(), replaced.end(), target) != replaced.end()) return true;
        return resolve(original, lost_before) != target;
    });
    cv_.notify_all();
}

// What a survivor's store tells the others, and a replacement's, at a
// recovery: the last operation it has begun (and its tag), the newest
// complete version, and the parts it knows of operations. All then agree,
// from the same facts, that a replaced rank's new process joins after the
// latest operation begun anywhere, and on the parts of the dead ranks.
std::vector<char> store::impl::recovery_state() {
    std::lock_guard l(m_);
    if (closed_) return {};
    auto it = placements_.find(committed_);
    const detail::recovery_facts f{op_, last_tag_, committed_, it == placements_.end() ? 0 : it->second.blocks()};
    std::vector<char> out(sizeof f);
    std::memcpy(out.data(), &f, sizeof f);
    detail::encode_records(ops_, out);  // what it knows of each rank's part of its open operations
    return out;
}

// On the process that replaced a dead rank: carry on after the operations the
// survivors have begun, from the newest version complete at the recovery. It
// never waits for the survivors: an operation under way may need this rank's
// program to go on before it can end. (A version completed after the
// recovery, by an operation this rank did not take part in, is newer than
// the one it knows; checkpoints keep their logs two deep for that.)
void store::impl::join() {
    if (recovery::incarnation() == 0) return;
    const auto states = last_recovery_states();
    std::lock_guard l(m_);
    std::optional<detail::recovery_facts> newest;
    for (std::size_t q = 0; q < states.size(); ++q) {
        const auto f = static_cast<int>(q) == me_ ? std::nullopt : detail::read_facts(states[q]);
        if (!f) continue;
        if (f->op > op_) {
            op_ = f->op;
            joined_after_tag_ = f->tag;
            // This process now stands after that operation as if it had
            // begun it: its recovery state must name the operation's tag
            // with its number, or a later replacement that reads this state
            // first would take part in that operation again.
            last_tag_ = f->tag;
        }
        if (!newest || f->committed > newest->committed) newest = f;
    }
    if (!newest) return;  // the survivors have no such store (yet): nothing to join
    replacement_ = true;
    committed_ = newest->committed;
    if (committed_ > 0)
        placements_.emplace(committed_, placement(newest->blocks, p_, r_, range_blocks_, opts_.seed));
    holds_from_[static_cast<std::size_t>(me_)] = committed_ + 1;  // copies reach it by the repair, if at all
}

std::uint64_t store::impl::restore_replication() {
    std::unique_lock l(m_);
    begin_op(committed_);
    const std::uint64_t version = committed_;
    const std::uint64_t sent = repair([&](int target, int original) {
        return target != original || holds_from_[static_cast<std::size_t>(target)] > version;
    });
    cv_.wait(l, [&] { return repairs_.empty() && in_flight_ == 0; });
    send_done();
    cv_.wait(l, [&] { return everyone_done() && in_flight_ == 0; });
    // Every rank's repairs are held now: replaced ranks surely hold this version.
    for (std::size_t q = 0; q < holds_from_.size(); ++q)
        if (!dead_in(op_, static_cast<int>(q))) holds_from_[q] = std::min(holds_from_[q], version);
    end_op();
    return sent;
}

// --- the public face -----------------------------------------------------

store::store(std::size_t block_bytes, options opts) : impl_(std::make_shared<impl>(block_bytes, opts)) {
    impl_->start();
    impl_->join();
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
store_counters store::counters() const { return impl_->counters(); }

}  // namespace rampart::store
