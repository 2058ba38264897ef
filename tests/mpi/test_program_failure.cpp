// The program of rank 1 fails in one way (the first argument) while every
// other rank waits for a message from it that will never come. The job must
// end within a second or so, with rank 1's message printed once and its exit
// status, and no spare may take rank 1's place (program_failure.sh checks).
//
//   throw       an exception leaves the runtime's scope; main catches it
//   uncaught    an exception leaves main (std::terminate)
//   exit3       exit(3) while the runtime lives
//   exit0       exit(0) while the runtime lives (the job must still fail)
//   exhausted   a resilient task fails in every attempt
//   return      rank 1's program returns normally without sending: the
//               receive on rank 0 fails with a comm_error naming source and tag
#include <rampart/comm/comm.hpp>
#include <rampart/rampart.hpp>
#include <rampart/recovery/recovery.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace comm = rampart::comm;

namespace {

int waits_for_rank_1() {
    try {
        comm::irecv<int>(1, 5).get();
        std::printf("rank %d: got a message that was never sent: wrong\n", comm::rank());
        return 1;
    } catch (const comm::comm_error& e) {
        // Only the "return" case gets here: rank 1's program ended normally.
        std::printf("rank %d saw: %s\n", comm::rank(), e.what());
        return 0;
    }
}

void fail_on_rank_1(const std::string& how) {
    if (how == "throw" || how == "uncaught") throw std::runtime_error("rank 1 gives up (" + how + ")");
    if (how == "exit3") std::exit(3);
    if (how == "exit0") std::exit(0);
    if (how == "exhausted") {
        auto f = rampart::async_replay(3, []() -> int { throw std::runtime_error("rank 1's task always fails"); });
        // The program does not look at f: it waits for rank 2, which waits
        // for rank 1 (a deadlock but for the runtime).
        comm::irecv<int>(2, 6).get();
        (void)f;
    }
}

int run(const std::string& how) {
    rampart::runtime rt(1);
    const int me = comm::rank();
    rampart::recovery::report_iteration(1);
    if (me == 1) {
        fail_on_rank_1(how);
        return 0;  // "return": ends without sending
    }
    if (me == 2 && how == "exhausted") comm::isend(1, 6, comm::irecv<int>(1, 7).get()).get();
    return waits_for_rank_1();
}

}  // namespace

int main(int argc, char** argv) {
    const std::string how = argc > 1 ? argv[1] : "";
    if (how == "uncaught") return run(how);  // nothing catches it
    try {
        return run(how);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "program_failure: %s\n", e.what());
        return 2;
    }
}
