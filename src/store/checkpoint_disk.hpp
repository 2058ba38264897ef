#pragma once
// The disk level of the store's checkpoints: a checkpoint complete in
// memory is also written to a folder (on a cluster, the parallel file
// system) by a thread of its own, so that the program does not wait for
// the disk: the first checkpoint in each span of K iterations, a choice
// every rank makes alike from the iterations of the saves (a replacement
// too, from the checkpoint it resumed at and the saves it skips). None is
// skipped, so every rank writes the same ones; a save waits only when the
// disk falls two checkpoints behind. A job started again after it lost a
// node (RAMPART_RESTART) resumes from the newest checkpoint complete there.
//
// Layout: DIR/checkpoints-C/iteration-I/rank-R.bin, C counting the
// checkpoints objects of the program in the order they are made. Each rank
// writes its file under a temporary name, syncs it and renames it: a file
// that exists is whole, and a checkpoint counts only when every rank's file
// is there. A rank removes its files of the iterations before the newest
// complete one, never that one, and keeps one of them aside as
// DIR/checkpoints-C/rank-R.bin.spare for its next write to fill.

#include <array>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rampart::store::detail {

/// From the environment: RAMPART_CHECKPOINT_DIR (no disk level without it),
/// RAMPART_CHECKPOINT_DISK_EVERY (K iterations, default 1), RAMPART_RESTART
/// (1: this job continues one that ended). Throws rampart::invalid_argument for
/// malformed values.
struct disk_settings {
    std::filesystem::path dir;
    std::uint64_t every = 1;
    bool restart = false;
    static disk_settings from_environment();
};

struct disk_counters {
    std::uint64_t written = 0;      ///< checkpoints this rank wrote to disk
    std::uint64_t waited = 0;       ///< saves that waited for room: one write running, another waiting
    double wait_seconds = 0;        ///< how long they waited
    std::uint64_t bytes = 0;        ///< bytes written
    double write_seconds = 0;       ///< time the writes took, in the background
    std::uint64_t failed = 0;       ///< writes that failed (the message went to stderr)
};

class disk_copies {
public:
    disk_copies(disk_settings settings, int object, int rank, int ranks);
    ~disk_copies();  // waits for the write under way
    disk_copies(const disk_copies&) = delete;
    disk_copies& operator=(const disk_copies&) = delete;

    bool enabled() const { return !settings_.dir.empty(); }
    bool restarted() const { return settings_.restart; }
    /// At every save (done, abandoned or skipped): whether the checkpoint
    /// of `iteration` goes to disk, the same answer on every rank.
    bool due(std::uint64_t iteration);
    /// Where a rank resumed: the saves after it are judged from there.
    void resumed_at(std::uint64_t iteration) { last_save_ = iteration; }
    /// Writes `record` as this rank's part of `iteration` in the
    /// background; waits while one write runs and another waits.
    void write_later(std::uint64_t iteration, std::string record);
    /// The newest checkpoint complete on disk: its iteration, and this rank's record of it.
    std::optional<std::pair<std::uint64_t, std::string>> newest_record() const;
    /// The newest iteration whose files of every rank are on disk.
    std::optional<std::uint64_t> newest_complete() const;
    disk_counters counters() const;

private:
    std::filesystem::path iteration_dir(std::uint64_t iteration) const;
    std::filesystem::path spare_path() const;  // an old file of this rank's, to write over
    void write(std::uint64_t iteration, const std::string& record);
    void drop_old();
    void take_spare(const std::filesystem::path& partial);
    void run();
    void note_counters() const;

    disk_settings settings_;
    std::filesystem::path root_;
    int rank_ = 0, ranks_ = 0, object_ = 0;
    mutable std::mutex m_;
    std::condition_variable cv_;
    std::optional<std::pair<std::uint64_t, std::string>> pending_;
    bool stop_ = false;
    std::optional<std::uint64_t> last_save_;
    disk_counters counters_;
    // Each write (the first ones, for the report): iteration, began and ended (µs since the epoch), bytes.
    std::vector<std::array<long long, 4>> writes_;
    std::thread writer_;
};

/// Microseconds since the epoch, for the notes rampart-run reads.
long long wall_clock_us();

}  // namespace rampart::store::detail
