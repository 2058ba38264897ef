#pragma once
// Checkpoints of each rank's state in the replicated store, joined to crash
// recovery: a spare that replaces a dead rank resumes from the newest
// checkpoint instead of from the start, and every rank drops from its send
// log what was sent before it, so the log stays bounded.
//
//     rampart::store::checkpoints cp(max_state_bytes);      // on every rank, first thing
//     State s = initial();
//     std::uint64_t it = 0;
//     if (auto back = cp.restore<State>()) { s = back->state; it = back->iteration + 1; }   // a replacement
//     for (; it < n; ++it) {
//         step(s);                                           // messages with neighbours
//         if (it % 100 == 99) cp.save(it, s);                // collective
//     }

#include <rampart/store/store.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

namespace rampart::store {

/// A rank's state loaded back from a checkpoint.
template <class T>
struct restored {
    std::uint64_t iteration = 0;  ///< what save() was given with it
    T state{};
};

/// What the checkpoints of this rank did, for reports and tests.
struct checkpoint_counters {
    std::uint64_t saved = 0;        ///< checkpoints complete on every rank
    std::uint64_t abandoned = 0;    ///< saves that a failure made incomplete (the previous one stays)
    std::uint64_t restored = 0;     ///< 1 on a replacement that resumed from a checkpoint
    std::uint64_t log_trimmed = 0;  ///< messages dropped from the send log by saves
    std::uint64_t skipped = 0;      ///< saves a replacement left out: the survivors had begun them without it
    std::uint64_t restored_from_disk = 0;   ///< 1 on a rank of a job started again that resumed from disk
    std::uint64_t disk_written = 0;         ///< checkpoints this rank wrote to the checkpoint folder
    std::uint64_t disk_waits = 0;           ///< saves that waited for the disk (one write running, one queued)
    double disk_wait_seconds = 0;           ///< how long they waited
    std::uint64_t disk_bytes = 0;           ///< bytes this rank wrote there
    double disk_write_seconds = 0;          ///< how long those writes took (in the background)
};

namespace detail {
class disk_copies;
struct disk_settings;
}  // namespace detail

/// Per-rank checkpoints in a rampart::store. Every rank creates one at the
/// same point, before it sends or receives anything, and calls save at the
/// same iterations. The newest checkpoint outlives the object: its copies
/// stay in memory until the process ends, since a rank that dies after the
/// others' programs have ended is still replaced from it (their send logs
/// no longer hold what came before it).
///
/// With RAMPART_CHECKPOINT_DIR set (rampart-run --checkpoint-dir), the first
/// complete checkpoint in each span of K iterations
/// (RAMPART_CHECKPOINT_DISK_EVERY, default 1: every one) is also written
/// there by a background thread, and a job started again after
/// it lost a node (RAMPART_RESTART=1, rampart-run --restart) resumes from the
/// newest checkpoint complete on disk: restore() returns it on every rank.
class checkpoints {
public:
    /// A slot of `max_state_bytes` per rank (the serialised state must fit),
    /// the same on every rank. Throws rampart::invalid_argument for 0; a save
    /// throws it on every rank when the ranks gave different sizes.
    explicit checkpoints(std::size_t max_state_bytes, options opts = {});
    ~checkpoints();
    checkpoints(const checkpoints&) = delete;
    checkpoints& operator=(const checkpoints&) = delete;

    /// Saves `state` (cereal-serialisable) as this rank's part of the
    /// checkpoint of `iteration`. Collective. Call it where this rank waits
    /// for no message and has received every message its neighbours sent
    /// before their save (a consistent cut: an iteration boundary after the
    /// halo exchange). Returns true once the checkpoint is complete on every
    /// rank; then this rank's send log drops what it sent before the
    /// checkpoint before it (logs are kept two checkpoints deep: a
    /// replacement may resume from the one before the newest). Returns false
    /// when a failure during the save made it incomplete (the previous
    /// checkpoint stays), and on a replacement for the saves the survivors
    /// had begun without it. Throws rampart::invalid_argument when a receive is
    /// pending, and on every rank when some rank's state does not fit or the
    /// ranks gave different maximum sizes.
    template <class T>
    bool save(std::uint64_t iteration, const T& state) {
        std::ostringstream os(std::ios::binary);
        {
            cereal::BinaryOutputArchive ar(os);
            ar(state);
        }
        return save_bytes(iteration, os.str());
    }

    /// On a process that replaced a dead rank: this rank's state in the
    /// newest complete checkpoint, with the message channels set back to
    /// that moment (the survivors' re-sent messages from before it are
    /// dropped). Empty on a rank's first process, and when no checkpoint was
    /// complete (the replacement then runs from the start). In a job started
    /// again (RAMPART_RESTART=1): the newest checkpoint complete on disk, on
    /// every rank, with every channel starting anew there. Call it once,
    /// right after the constructor.
    template <class T>
    std::optional<restored<T>> restore() {
        auto bytes = restore_bytes();
        if (!bytes) return std::nullopt;
        restored<T> out;
        out.iteration = bytes->first;
        std::istringstream is(std::move(bytes->second), std::ios::binary);
        cereal::BinaryInputArchive ar(is);
        ar(out.state);
        return out;
    }

    checkpoint_counters counters() const;
    /// The store the checkpoints live in (its counters, its replication level).
    store& storage() noexcept { return *store_; }

private:
    checkpoints(std::size_t max_state_bytes, options opts, detail::disk_settings&& disk);
    bool save_bytes(std::uint64_t iteration, const std::string& state);
    std::optional<std::pair<std::uint64_t, std::string>> restore_bytes();
    std::optional<std::pair<std::uint64_t, std::string>> restore_from_disk();

    std::size_t slot_blocks_ = 0;
    std::unique_ptr<store> store_;
    checkpoint_counters counters_;
    std::vector<char> previous_;  // channel counts of the last complete checkpoint, as bytes
    std::unique_ptr<detail::disk_copies> disk_;
};

}  // namespace rampart::store
