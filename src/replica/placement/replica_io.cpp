#include "replica_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rampart::replica::detail {

void take_standard_input(int rank) {
    const char* copy = std::getenv("RAMPART_STDIN");
    if (!copy) return;
    const int fd = ::open(rank == 0 ? copy : "/dev/null", O_RDONLY);
    if (fd < 0) return;
    ::dup2(fd, STDIN_FILENO);
    ::close(fd);
}

std::string enter_working_directory(int replica) {
    const char* dirs = std::getenv("RAMPART_REPLICA_DIRS");
    if (!dirs || !*dirs || replica == 0) return {};
    const std::string mine = std::string(dirs) + "/replica-" + std::to_string(replica);
    if (::chdir(mine.c_str()) != 0)
        return "replica " + std::to_string(replica) + " cannot work in " + mine + ": " + std::strerror(errno);
    return {};
}

}  // namespace rampart::replica::detail
