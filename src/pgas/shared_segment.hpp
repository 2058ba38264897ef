#pragma once
// A POSIX shared-memory segment, the memory of a rank's copies of array
// blocks. The rank that holds the copies creates it; the other ranks of its
// node map it by name, so that a put or get is a copy in memory with no
// message. The mapping outlives the process that created it: when a rank
// dies, the others still map its segment (its copies count as lost all the
// same; see array_core.cpp).

#include <cstddef>
#include <cstdint>
#include <string>

namespace rampart::pgas::detail {

class shared_segment {
public:
    shared_segment() = default;
    /// Creates the segment `name` of `bytes` bytes, zeroed; throws
    /// rampart::error naming the name and errno's text when the system
    /// refuses (no /dev/shm, no memory, a name in use).
    static shared_segment create(const std::string& name, std::size_t bytes);
    /// Maps the existing segment `name`; its size is read from the system.
    static shared_segment open(const std::string& name);
    /// Removes the name (mappings stay valid); false if it was gone already.
    static bool unlink(const std::string& name);

    shared_segment(shared_segment&& o) noexcept { *this = std::move(o); }
    shared_segment& operator=(shared_segment&& o) noexcept;
    shared_segment(const shared_segment&) = delete;
    shared_segment& operator=(const shared_segment&) = delete;
    ~shared_segment();

    char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return bytes_; }

private:
    char* data_ = nullptr;
    std::size_t bytes_ = 0;
};

/// The name of segment `seg` of array `array` created by process `pid`:
/// unique on a node while that process lives.
std::string segment_name(std::int64_t pid, std::uint64_t array, int seg);

}  // namespace rampart::pgas::detail
