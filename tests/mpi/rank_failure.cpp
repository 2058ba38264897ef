// A rank dies (SIGKILL) while its peer waits for its messages. Without spare
// ranks there is nothing to recover with: the waiting receive must fail with a
// comm_error that names the dead rank, and the survivor must shut down
// cleanly (final agreement, then Finalize under the watchdog).
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>

#include <csignal>
#include <cstdio>

int main() {
    rampart::runtime rt(1);
    const int me = rampart::comm::rank();
    if (me == 1) {
        rampart::comm::isend(0, 1, 41).get();
        std::raise(SIGKILL);  // dies as a crash does: no Finalize
    }
    if (me == 0) {
        int first = rampart::comm::irecv<int>(1, 1).get();
        std::printf("survivor got %d before the crash\n", first);
        try {
            rampart::comm::irecv<int>(1, 1).get();
            std::printf("survivor got a second message: wrong\n");
            return 1;
        } catch (const rampart::comm::comm_error& e) {
            std::printf("survivor saw: %s\n", e.what());
        }
    }
    return 0;
}
