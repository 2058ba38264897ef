// The handlers of other ranks' store messages, on the engine thread.

#include "store_impl.hpp"

namespace rampart::store {

using comm::segment;
using detail::head;
using detail::kind;
using detail::max_message_bytes;

void store::impl::on_message(int source, std::vector<char>&& bytes, std::size_t offset) {
    auto d = detail::decode(bytes.data(), bytes.size(), offset, block_bytes_);
    std::lock_guard l(m_);
    if (!d || source < 0 || source >= p_) {
        ++counters_.malformed;
        return;
    }
    switch (d->h.what) {
        case kind::put:
            on_put(source, *d, std::move(bytes));
            break;
        case kind::get:
            on_get(source, *d);
            break;
        case kind::ack:
            on_ack(source, d->h);
            break;
        case kind::data:
            on_data(source, *d, bytes);
            break;
        case kind::done:
            on_done(source, *d);
            break;
        case kind::ready:
            on_ready(source, d->h);
            break;
        case kind::outcome:
            on_outcome(d->h);
            break;
    }
    cv_.notify_all();
}

// Blocks to hold (decode checked that the payload is the blocks); acknowledged
// whether kept or not. Not kept: a late repair, a put to a closed store, or a
// late put of a submit that was abandoned here already (its blocks would
// shadow those of the next attempt at the version).
void store::impl::on_put(int source, const detail::decoded& d, std::vector<char>&& bytes) {
    const head& h = d.h;
    const auto gone = abandoned_.find(h.version);
    const bool late = h.op != 0 && gone != abandoned_.end() && h.op <= gone->second;
    if (h.version >= committed_ && !closed_ && !late)
        hold(h.version, h.op, d.ranges, std::make_shared<const std::vector<char>>(std::move(bytes)), d.payload_offset);
    head a;
    a.what = kind::ack;
    a.op = h.op;
    a.request = h.request;
    send(
        source, detail::encode(a), {}, [](bool) {}, epoch());
}

// Holding every range asked for, this rank sends the blocks straight into the
// asker's output (a reply). Else the reply is empty, and a data message says
// which ranges are here: a byte per range (1: here, its blocks follow),
// padded to 8, then the blocks held.
void store::impl::on_get(int source, const detail::decoded& d) {
    const head& h = d.h;
    auto keep = std::make_shared<std::vector<std::shared_ptr<const std::vector<char>>>>();
    if (auto all = find(h.version, d.ranges, *keep)) {
        for (auto& r : d.ranges) counters_.blocks_served += r.count;
        reply(
            source, h.request, std::move(*all), [keep](bool) {}, epoch());
        return;
    }
    const std::size_t flags = (d.ranges.size() + 7) / 8 * 8;
    auto data = std::make_shared<std::pair<std::vector<char>, std::vector<std::shared_ptr<const std::vector<char>>>>>();
    data->first.assign(flags, 0);
    std::vector<segment> segs{{data->first.data(), flags}};
    for (std::size_t i = 0; i < d.ranges.size(); ++i) {
        auto found = find(h.version, {d.ranges[i]}, data->second);
        if (!found) continue;
        data->first[i] = 1;
        segs.insert(segs.end(), found->begin(), found->end());
        counters_.blocks_served += d.ranges[i].count;
    }
    head a;
    a.what = kind::data;
    a.op = h.op;
    a.request = h.request;
    const std::uint64_t now = epoch();  // one for the two messages
    send(
        source, detail::encode(a), std::move(segs), [data](bool) {}, now);
    reply(
        source, h.request, {}, [](bool) {}, now);
}

// A put arrived: its request (of a submit or of a repair) is done.
void store::impl::on_ack(int source, const head& h) {
    for (auto* requests : {&outstanding_, &repairs_}) {
        auto it = requests->find(h.request);
        if (it != requests->end() && it->second.what == kind::put && it->second.dest == source) requests->erase(it);
    }
}

// The holder did not have every range of a get: what it had is copied into
// the output, the rest is asked of other holders.
void store::impl::on_data(int source, const detail::decoded& d, const std::vector<char>& bytes) {
    auto it = outstanding_.find(d.h.request);
    if (it == outstanding_.end() || it->second.what != kind::get || it->second.dest != source || !out_)
        return;  // answered already (a request sent again after a failure)
    auto& parts = it->second.parts;
    std::vector<std::uint64_t> counts;
    for (const wanted& w : parts) counts.push_back(w.ids.count);
    const auto here = detail::decode_data(bytes.data() + d.payload_offset, d.payload_bytes, counts, block_bytes_);
    if (!here) {
        ++counters_.malformed;
        return;
    }
    std::size_t at = d.payload_offset + detail::data_flags_bytes(parts.size());
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
}

}  // namespace rampart::store
