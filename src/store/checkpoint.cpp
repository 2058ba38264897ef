// Checkpoints in the store (include/rampart/store/checkpoint.hpp). Rank q's
// record lives in blocks [q*slot, (q+1)*slot) of each version: a head
// (magic, iteration, state bytes, channel bytes), the state, and the counts
// of its message channels at the save, which a replacement gives back to the
// engine so that numbering and duplicates continue from that moment. Every
// k-th complete record also goes to disk (checkpoint_disk.hpp).

#include <rampart/comm/comm.hpp>
#include <rampart/recovery/recovery.hpp>
#include <rampart/store/checkpoint.hpp>

#include "checkpoint_disk.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace rampart::store {

namespace {
constexpr std::size_t block = 4096;
constexpr std::size_t channel_room = 64 * 1024;                // counts of up to ~4000 channels
constexpr std::uint64_t record_magic = 0x5452504b43505452ULL;  // "RTPCKPRT"
struct record_head {
    std::uint64_t magic = record_magic;
    std::uint64_t iteration = 0;
    std::uint64_t state_bytes = 0;
    std::uint64_t channel_bytes = 0;
};

// For rampart-run's report: where a rank resumed from and how long loading took.
void note_restore(const char* from, std::uint64_t iteration, long long began_us) {
    const char* prefix = std::getenv("RAMPART_REPORT");
    if (!prefix || !*prefix) return;
    const std::string path = std::string(prefix) + ".restored." + std::to_string(comm::rank()) + "." +
                             std::to_string(recovery::incarnation());
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f, "{\"rank\":%d,\"incarnation\":%d,\"from\":\"%s\",\"iteration\":%llu,\"began_us\":%lld,"
                        "\"done_us\":%lld}\n",
                     comm::rank(), recovery::incarnation(), from, static_cast<unsigned long long>(iteration), began_us,
                     detail::wall_clock_us());
        std::fclose(f);
    }
}

std::size_t slot_blocks(std::size_t max_state_bytes) {
    if (max_state_bytes == 0)
        throw rampart::invalid_argument("rampart::store::checkpoints: a state of at most 0 bytes");
    return (sizeof(record_head) + max_state_bytes + channel_room + block - 1) / block;
}
}  // namespace

// The disk settings are read first: a malformed one throws before the store
// exists (a store, once made, is never destroyed).
checkpoints::checkpoints(std::size_t max_state_bytes, options opts)
    : checkpoints(max_state_bytes, opts, detail::disk_settings::from_environment()) {}

checkpoints::checkpoints(std::size_t max_state_bytes, options opts, detail::disk_settings&& disk)
    : slot_blocks_(slot_blocks(max_state_bytes)) {
    static std::atomic<int> objects{0};  // made in the same order on every rank
    disk_ = std::make_unique<detail::disk_copies>(std::move(disk), objects++, comm::rank(), comm::size());
    store_ = std::make_unique<store>(block, opts);
}

checkpoints::~checkpoints() {
    // Kept, open, until the process ends (never destroyed: closing waits for
    // operations that no process will answer once the job is over).
    static std::mutex m;
    static auto* kept = new std::vector<std::unique_ptr<store>>;
    std::lock_guard lock(m);
    kept->push_back(std::move(store_));
}

bool checkpoints::save_bytes(std::uint64_t iteration, const std::string& state) {
    const bool to_disk = disk_->due(iteration);  // at every save, done or not: the same choice on every rank
    if (store_->done_without_me(iteration)) {
        ++counters_.skipped;
        return false;
    }
    const std::size_t room = slot_blocks_ * block - sizeof(record_head) - channel_room;
    std::string problem;
    std::vector<char> channels;
    if (state.size() > room) {
        problem = "a state of " + std::to_string(state.size()) + " bytes does not fit its slot of " +
                  std::to_string(room) + " bytes";
    } else {
        try {
            channels = recovery::snapshot_channels().to_bytes();
            if (channels.size() > channel_room)
                problem = "the counts of " + std::to_string(channels.size()) + " bytes do not fit their room";
        } catch (const rampart::invalid_argument& x) {
            problem = x.what();
        }
    }
    const auto me = static_cast<std::uint64_t>(comm::rank()), p = static_cast<std::uint64_t>(comm::size());
    std::vector<std::byte> slot;
    if (problem.empty()) {
        slot.assign(slot_blocks_ * block, std::byte{0});
        record_head h{record_magic, iteration, state.size(), channels.size()};
        std::memcpy(slot.data(), &h, sizeof h);
        std::memcpy(slot.data() + sizeof h, state.data(), state.size());
        std::memcpy(slot.data() + sizeof h + state.size(), channels.data(), channels.size());
    }
    // Every rank takes part in the submit, so that a rank with a problem
    // makes the checkpoint incomplete instead of leaving the others waiting.
    try {
        store_->tag_next_operation(iteration);
        store_->submit(me * slot_blocks_, slot, p * slot_blocks_);
    } catch (const store_error& x) {
        if (!problem.empty()) throw rampart::invalid_argument("rampart::store::checkpoints::save: " + problem);
        // A program error, not a fault: no later save could do better.
        if (!x.by_failures())
            throw rampart::invalid_argument("rampart::store::checkpoints::save: the checkpoint of iteration " +
                                            std::to_string(iteration) + " is refused (" + x.what() +
                                            "): a rank's state did not fit, or the ranks gave different maximum "
                                            "state sizes");
        ++counters_.abandoned;
        return false;
    }
    if (!problem.empty()) throw rampart::invalid_argument("rampart::store::checkpoints::save: " + problem);
    const std::size_t record_bytes = sizeof(record_head) + state.size() + channels.size();
    if (!previous_.empty()) {
        const std::uint64_t before = comm::counters().send_log_trimmed;
        recovery::trim_send_log(recovery::channel_state::from_bytes(previous_));
        counters_.log_trimmed += comm::counters().send_log_trimmed - before;
    }
    previous_ = std::move(channels);
    ++counters_.saved;
    if (to_disk) disk_->write_later(iteration, std::string(reinterpret_cast<const char*>(slot.data()), record_bytes));
    return true;
}

std::optional<std::pair<std::uint64_t, std::string>> checkpoints::restore_bytes() {
    if (recovery::incarnation() == 0 || store_->version() == 0)
        return disk_->restarted() ? restore_from_disk() : std::nullopt;
    const long long began_us = detail::wall_clock_us();
    const auto me = static_cast<std::uint64_t>(comm::rank()), p = static_cast<std::uint64_t>(comm::size());
    if (store_->blocks() != p * slot_blocks_)
        throw rampart::invalid_argument("rampart::store::checkpoints::restore: the checkpoint has " +
                                        std::to_string(store_->blocks()) + " blocks, not " +
                                        std::to_string(p * slot_blocks_) + ": a different slot size");
    const id_range mine{me * slot_blocks_, slot_blocks_};
    const std::vector<char> bytes = store_->fetch(std::span<const id_range>(&mine, 1));
    record_head h;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.magic != record_magic || h.state_bytes > bytes.size() - sizeof h ||
        h.channel_bytes > bytes.size() - sizeof h - h.state_bytes)
        throw store_error("rampart::store::checkpoints::restore: the record of rank " + std::to_string(me) +
                              " is malformed",
                          {}, false);
    const char* at = bytes.data() + sizeof h;
    recovery::restore_channels(recovery::channel_state::from_bytes(at + h.state_bytes, h.channel_bytes));
    previous_.assign(at + h.state_bytes, at + h.state_bytes + h.channel_bytes);
    ++counters_.restored;
    disk_->resumed_at(h.iteration);
    note_restore("memory", h.iteration, began_us);
    return std::pair{h.iteration, std::string(at, h.state_bytes)};
}

// A job started again: every rank resumes from the newest checkpoint
// complete on disk. No message crossed that cut, so every channel starts
// anew there (counts 0), on every rank alike; a replacement in this job
// before its first checkpoint in memory resumes from there too.
std::optional<std::pair<std::uint64_t, std::string>> checkpoints::restore_from_disk() {
    const long long began_us = detail::wall_clock_us();
    const auto newest = disk_->newest_record();
    if (!newest) return std::nullopt;
    const auto& [iteration, bytes] = *newest;
    record_head h;
    if (bytes.size() < sizeof h)
        throw store_error("rampart::store::checkpoints::restore: a record on disk is cut short", {}, false);
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.magic != record_magic || h.state_bytes > bytes.size() - sizeof h ||
        h.channel_bytes != bytes.size() - sizeof h - h.state_bytes || h.iteration != iteration)
        throw store_error("rampart::store::checkpoints::restore: the record of rank " + std::to_string(comm::rank()) +
                              " on disk for iteration " + std::to_string(iteration) + " is malformed",
                          {}, false);
    ++counters_.restored;
    ++counters_.restored_from_disk;
    disk_->resumed_at(h.iteration);
    note_restore("disk", h.iteration, began_us);
    return std::pair{h.iteration, bytes.substr(sizeof h, h.state_bytes)};
}

checkpoint_counters checkpoints::counters() const {
    checkpoint_counters c = counters_;
    const detail::disk_counters d = disk_->counters();
    c.disk_written = d.written;
    c.disk_waits = d.waited;
    c.disk_wait_seconds = d.wait_seconds;
    c.disk_bytes = d.bytes;
    c.disk_write_seconds = d.write_seconds;
    return c;
}

}  // namespace rampart::store
