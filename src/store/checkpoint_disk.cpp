// The disk level of the store's checkpoints (checkpoint_disk.hpp).

#include "checkpoint_disk.hpp"

#include <rampart/task/errors.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace rampart::store::detail {

namespace fs = std::filesystem;

namespace {

std::uint64_t positive(const char* name, std::string_view text) {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v == 0)
        throw rampart::invalid_argument("rampart: " + std::string(name) + "='" + std::string(text) +
                                        "' is not a positive integer");
    return v;
}

// Writes `bytes` to `path` and syncs it; false on any failure. A file
// already at `path` (a recycled one) is written over in place: its blocks
// are allocated already, so the sync has no allocation to commit, which
// takes a checkpoint to disk about a third faster on ext4. The write-back
// of each chunk starts while the next is copied, so that the sync at the
// end has little left to wait for.
bool write_synced(const fs::path& path, const std::string& bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    constexpr std::size_t chunk = std::size_t{1} << 20;
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, std::min(chunk, bytes.size() - done));
        if (n <= 0) break;
        ::sync_file_range(fd, static_cast<off_t>(done), n, SYNC_FILE_RANGE_WRITE);
        done += static_cast<std::size_t>(n);
    }
    struct stat st {};
    bool ok = done == bytes.size() && ::fstat(fd, &st) == 0;
    if (ok && static_cast<std::size_t>(st.st_size) > bytes.size())
        ok = ::ftruncate(fd, static_cast<off_t>(bytes.size())) == 0;
    ok = ok && ::fdatasync(fd) == 0;
    return ::close(fd) == 0 && ok;
}

void sync_dir(const fs::path& dir) {
    if (const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// The iteration a folder "iteration-I" names, or nothing.
std::optional<std::uint64_t> iteration_of(const fs::path& dir) {
    const std::string name = dir.filename().string();
    constexpr std::string_view prefix = "iteration-";
    if (!name.starts_with(prefix)) return std::nullopt;
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), v);
    if (ec != std::errc{} || end != name.data() + name.size()) return std::nullopt;
    return v;
}

std::string rank_file(int rank) { return "rank-" + std::to_string(rank) + ".bin"; }


}  // namespace

long long wall_clock_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

disk_settings disk_settings::from_environment() {
    disk_settings s;
    if (const char* d = std::getenv("RAMPART_CHECKPOINT_DIR"); d && *d) s.dir = fs::absolute(d);
    if (const char* e = std::getenv("RAMPART_CHECKPOINT_DISK_EVERY"); e && *e)
        s.every = positive("RAMPART_CHECKPOINT_DISK_EVERY", e);
    if (const char* r = std::getenv("RAMPART_RESTART"); r && *r) {
        if (std::string_view(r) != "1" && std::string_view(r) != "0")
            throw rampart::invalid_argument("rampart: RAMPART_RESTART='" + std::string(r) + "' is not 0 or 1");
        s.restart = std::string_view(r) == "1";
    }
    return s;
}

disk_copies::disk_copies(disk_settings settings, int object, int rank, int ranks)
    : settings_(std::move(settings)), rank_(rank), ranks_(ranks), object_(object) {
    if (!enabled()) return;
    root_ = settings_.dir / ("checkpoints-" + std::to_string(object));
    writer_ = std::thread([this] { run(); });
}

disk_copies::~disk_copies() {
    if (!writer_.joinable()) return;
    {
        std::lock_guard lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    writer_.join();
    note_counters();
}

// For rampart-run's report: what this rank wrote to disk.
void disk_copies::note_counters() const {
    const char* prefix = std::getenv("RAMPART_REPORT");
    if (!prefix || !*prefix) return;
    const std::string path = std::string(prefix) + ".disk." + std::to_string(rank_) + "." + std::to_string(::getpid()) +
                             "." + std::to_string(object_);
    nlohmann::ordered_json note = {{"rank", rank_}, {"object", object_}, {"written", counters_.written},
                                   {"waited", counters_.waited},   {"wait_seconds", counters_.wait_seconds},
                                   {"failed", counters_.failed},
                                   {"bytes", counters_.bytes},     {"write_seconds", counters_.write_seconds},
                                   {"writes", writes_}};
    if (FILE* f = std::fopen(path.c_str(), "w")) {
        std::fprintf(f, "%s\n", note.dump().c_str());
        std::fclose(f);
    }
}

fs::path disk_copies::iteration_dir(std::uint64_t iteration) const {
    return root_ / ("iteration-" + std::to_string(iteration));
}

fs::path disk_copies::spare_path() const { return root_ / (rank_file(rank_) + ".spare"); }

bool disk_copies::due(std::uint64_t iteration) {
    const bool first_in_span = !last_save_ || iteration / settings_.every != *last_save_ / settings_.every;
    last_save_ = iteration;
    return enabled() && first_in_span;
}

// Never skipped: a choice made per rank would leave each rank with other
// iterations on disk, and few checkpoints complete. While one write runs and
// another waits, the save waits too (the disk is slower than the saves).
void disk_copies::write_later(std::uint64_t iteration, std::string record) {
    if (!writer_.joinable()) return;  // no disk level
    {
        std::unique_lock lock(m_);
        if (pending_) {
            const auto t0 = std::chrono::steady_clock::now();
            cv_.wait(lock, [this] { return !pending_; });
            ++counters_.waited;
            counters_.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        pending_.emplace(iteration, std::move(record));
    }
    cv_.notify_all();
}

void disk_copies::run() {
    for (;;) {
        std::pair<std::uint64_t, std::string> job;
        {
            std::unique_lock lock(m_);
            cv_.wait(lock, [this] { return stop_ || pending_; });
            if (!pending_) return;  // stopping, nothing left to write
            job = std::move(*pending_);
            pending_.reset();
        }
        cv_.notify_all();  // a save waiting for room
        write(job.first, job.second);
    }
}

void disk_copies::write(std::uint64_t iteration, const std::string& record) {
    const auto t0 = std::chrono::steady_clock::now();
    const long long began_us = wall_clock_us();
    const fs::path dir = iteration_dir(iteration), file = dir / rank_file(rank_);
    const fs::path partial = fs::path(file).concat(".partial");
    std::error_code ec;
    fs::create_directories(dir, ec);
    bool ok = !ec;
    if (ok) {
        drop_old();  // again: the other ranks may have completed the last checkpoint since, freeing a file to reuse
        take_spare(partial);
        ok = write_synced(partial, record);
    }
    if (ok) {
        fs::rename(partial, file, ec);  // the file appears whole, or not at all
        ok = !ec;
        sync_dir(dir);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!ok) {
        std::fprintf(stderr, "rampart: rank %d: the checkpoint of iteration %llu could not be written to %s\n", rank_,
                     static_cast<unsigned long long>(iteration), file.c_str());
        fs::remove(partial, ec);
    }
    {
        std::lock_guard lock(m_);
        counters_.write_seconds += seconds;
        if (!ok) {
            ++counters_.failed;
            return;
        }
        ++counters_.written;
        counters_.bytes += record.size();
        if (writes_.size() < 1000)
            writes_.push_back({static_cast<long long>(iteration), began_us, wall_clock_us(),
                               static_cast<long long>(record.size())});
    }
    drop_old();
}

// The spare file, if there is one, moved to `partial` to be written over;
// one that cannot be moved is removed (the write then makes a new file).
void disk_copies::take_spare(const fs::path& partial) {
    std::error_code ec;
    if (!fs::exists(spare_path(), ec)) return;
    fs::rename(spare_path(), partial, ec);
    if (ec) fs::remove(spare_path(), ec);
}

// Removes this rank's files of the iterations before the newest checkpoint
// complete on disk, and their folders once empty (the last rank to remove
// its file removes the folder). The newest complete one always stays. One
// old file is kept aside to be written over by the next write.
void disk_copies::drop_old() {
    const auto keep_from = newest_complete();
    if (!keep_from) return;
    bool synced = false;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_, ec)) {
        const auto it = iteration_of(entry.path());
        if (!it || *it >= *keep_from) continue;
        // The other ranks' renames that completed it may not be on disk yet:
        // a crash of the machine would then leave an older checkpoint the
        // newest complete one, which must still be there, unchanged.
        if (!std::exchange(synced, true)) sync_dir(iteration_dir(*keep_from));
        const fs::path file = entry.path() / rank_file(rank_);
        if (fs::exists(file, ec) && !fs::exists(spare_path(), ec)) fs::rename(file, spare_path(), ec);
        fs::remove(file, ec);
        fs::remove(entry.path() / (rank_file(rank_) + ".partial"), ec);
        fs::remove(entry.path(), ec);  // only when empty
    }
}

std::optional<std::uint64_t> disk_copies::newest_complete() const {
    std::vector<std::uint64_t> iterations;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_, ec))
        if (const auto it = iteration_of(entry.path())) iterations.push_back(*it);
    std::sort(iterations.rbegin(), iterations.rend());
    for (const std::uint64_t it : iterations) {
        bool complete = true;
        for (int r = 0; r < ranks_ && complete; ++r) complete = fs::exists(iteration_dir(it) / rank_file(r), ec);
        if (complete) return it;
    }
    return std::nullopt;
}

std::optional<std::pair<std::uint64_t, std::string>> disk_copies::newest_record() const {
    if (!enabled()) return std::nullopt;
    const auto it = newest_complete();
    if (!it) return std::nullopt;
    const fs::path file = iteration_dir(*it) / rank_file(rank_);
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.is_open() || in.bad())
        throw rampart::invalid_argument("rampart: the checkpoint file " + file.string() + " cannot be read");
    return std::pair{*it, std::move(bytes)};
}

disk_counters disk_copies::counters() const {
    std::lock_guard lock(m_);
    return counters_;
}

}  // namespace rampart::store::detail
