// rampart-bench-ulfm-primitives: what the collective steps of a recovery
// cost without a failure, on P processes, in a plain MPI program. The
// recovery's agreement phase is ULFM's revoke, shrink and agree, and its
// exchange of counts is closed by ULFM's non-blocking agreement; timed here
// alone, with thousands of samples, their growth with P shows without the
// noise of a kill.
//
//   agree_us    MPIX_Comm_agree on a duplicate of MPI_COMM_WORLD
//   iagree_us   MPIX_Comm_iagree, then MPI_Wait
//   shrink_us   MPIX_Comm_shrink of the duplicate (nobody failed), then
//               MPI_Comm_free of the result
//   barrier_us  MPI_Barrier, for scale
//
// A sample is one operation; every rank times it from a common barrier and
// the sample is the largest time over the ranks (the operation ends for the
// program when it has ended everywhere). Each figure is the median and the
// 90th percentile over --samples samples, after a tenth as many untimed.
// Rank 0 prints one JSON object.
//
// The revoke is not timed alone: revoking duplicates of one communicator in
// a loop crashes Open MPI 5.0.11 within a few hundred rounds (a segfault in
// ompi_comm_revoke_local, reached from MPI_Comm_dup), freed or not.

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#if defined(OMPI_HAVE_MPI_EXT_FTMPI) && OMPI_HAVE_MPI_EXT_FTMPI
namespace {

using json = nlohmann::ordered_json;

void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, text, &n);
    std::fprintf(stderr, "rampart-bench-ulfm-primitives: %s failed: %s\n", what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

// Median and 90th percentile, in microseconds, of the slowest rank's time of
// each sample of op.
json measure(const std::function<void()>& op, int samples) {
    for (int i = 0; i < samples / 10; ++i) op();
    std::vector<double> mine(static_cast<std::size_t>(samples)), slowest(mine.size());
    for (auto& t : mine) {
        MPI_Barrier(MPI_COMM_WORLD);
        const auto start = std::chrono::steady_clock::now();
        op();
        t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    }
    MPI_Reduce(mine.data(), slowest.data(), samples, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    std::sort(slowest.begin(), slowest.end());
    auto at = [&](double q) { return slowest[static_cast<std::size_t>(q * (samples - 1))]; };
    return {{"median", at(0.5)}, {"p90", at(0.9)}};
}

json run_all(MPI_Comm comm, int samples) {
    json out;
    out["agree_us"] = measure([&] {
        int flag = 1;
        check(MPIX_Comm_agree(comm, &flag), "MPIX_Comm_agree");
    }, samples);
    out["iagree_us"] = measure([&] {
        int flag = 1;
        MPI_Request r;
        check(MPIX_Comm_iagree(comm, &flag, &r), "MPIX_Comm_iagree");
        check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait on MPIX_Comm_iagree");
    }, samples);
    out["shrink_us"] = measure([&] {
        MPI_Comm s;
        check(MPIX_Comm_shrink(comm, &s), "MPIX_Comm_shrink");
        MPI_Comm_free(&s);
    }, samples);
    out["barrier_us"] = measure([&] { check(MPI_Barrier(comm), "MPI_Barrier"); }, samples);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"rampart-bench-ulfm-primitives: ULFM's agree and shrink without a failure"};
    int samples = 2000;
    app.add_option("--samples", samples, "timed operations of each kind")->check(CLI::Range(10, 1000000));
    bool as_json = true;  // the output is always one JSON object
    app.add_flag("--json", as_json, "accepted as by every rampart program: the output is always JSON");
    CLI11_PARSE(app, argc, argv);

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm;
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    json out = {{"processes", size}, {"samples", samples}};
    out.update(run_all(comm, samples));
    if (rank == 0) std::printf("%s\n", out.dump().c_str());
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
#else
int main() {
    std::fprintf(stderr, "rampart-bench-ulfm-primitives: this MPI has no ULFM (MPIX_Comm_agree, MPIX_Comm_shrink)\n");
    return 2;
}
#endif
