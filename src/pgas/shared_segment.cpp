// POSIX shared memory for the copies of array blocks (see shared_segment.hpp).

#include "shared_segment.hpp"

#include <rampart/task/errors.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace rampart::pgas::detail {

namespace {

[[noreturn]] void refuse(const std::string& what, const std::string& name, int err) {
    throw rampart::error("rampart::pgas: " + what + " shared memory " + name + ": " + std::strerror(err));
}

char* map(int fd, std::size_t bytes, const std::string& name) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) refuse("cannot map", name, err);
    return static_cast<char*>(p);
}

}  // namespace

shared_segment shared_segment::create(const std::string& name, std::size_t bytes) {
    int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) {  // left by a job that died, whose process had this pid
        ::shm_unlink(name.c_str());
        fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0) refuse("cannot create", name, errno);
    // A segment of 0 bytes cannot be mapped: keep one page.
    const std::size_t size = bytes == 0 ? 1 : bytes;
    // ftruncate alone reserves nothing on tmpfs: a full /dev/shm would be a
    // SIGBUS at the first touch instead of an error here.
    int err = ::ftruncate(fd, static_cast<off_t>(size)) != 0 ? errno : ::posix_fallocate(fd, 0, static_cast<off_t>(size));
    if (err != 0) {
        ::close(fd);
        ::shm_unlink(name.c_str());
        refuse("cannot size", name, err);
    }
    shared_segment s;
    s.data_ = map(fd, size, name);
    s.bytes_ = size;
    return s;
}

shared_segment shared_segment::open(const std::string& name) {
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0) refuse("cannot open", name, errno);
    struct stat st{};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
        const int err = errno;
        ::close(fd);
        refuse("cannot size", name, err);
    }
    shared_segment s;
    s.bytes_ = static_cast<std::size_t>(st.st_size);
    s.data_ = map(fd, s.bytes_, name);
    return s;
}

bool shared_segment::unlink(const std::string& name) { return ::shm_unlink(name.c_str()) == 0; }

shared_segment& shared_segment::operator=(shared_segment&& o) noexcept {
    if (this != &o) {
        if (data_) ::munmap(data_, bytes_);
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}

shared_segment::~shared_segment() {
    if (data_) ::munmap(data_, bytes_);
}

std::string segment_name(std::int64_t pid, std::uint64_t array, int seg) {
    return "/rampart-pgas." + std::to_string(pid) + "." + std::to_string(array) + "." + std::to_string(seg);
}

}  // namespace rampart::pgas::detail
