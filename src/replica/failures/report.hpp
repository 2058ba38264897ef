#pragma once
// What each process of a replicated job did, for rampart-run: one JSON file
// per process (RAMPART_REPORT prefix), written at the start and at the end.

#include <cstdint>
#include <string>

namespace rampart::replica::detail {

class protocol;
struct send_op;

void report_start(const protocol& p);
/// The program called MPI_Finalize (written with the end).
void report_program_ended();
/// `ended`: "normal", "failed" (this process ended the job) or "stopped";
/// `exit_code`: what the process exits with.
void report_end(const protocol& p, const std::string& ended, int exit_code = 0);
/// This process learnt that `process` died.
void report_death(const protocol& p, int process);
/// This spare re-created a replica (its rank and replica are the new ones).
void report_recreated(const protocol& p);
/// A difference between replicas' copies; `replica` -1: outvoted copies.
void report_corruption(const protocol& p, const send_op& op, int replica);
/// The two replicas of this rank got different results from a collective
/// run inside their sets.
void report_collective_corruption(const protocol& p, std::uint64_t index);

/// What a difference between the replicas of a rank may come from, and how
/// to tell: the end of every message that stops a job for one.
std::string divergence_causes(bool faults_injected);

}  // namespace rampart::replica::detail
