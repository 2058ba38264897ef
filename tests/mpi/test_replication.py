#!/usr/bin/env python3
"""A process-replication scenario: an unmodified MPI program runs natively
(mpiexec, the reference) and under rampart-run --replicas with the given
faults; the verdict compares them.

usage: test_replication.py RAMPART_RUN MPIEXEC LIBRARY EXPECT -n N [rampart-run options] -- PROGRAM [args]

EXPECT:
  identical      exit 0, the native checksum, and every --kill done (and,
                 with --flip-bits, flips injected and corrections made;
                 without faults, no message sent again or dropped as a
                 duplicate and every collective kept inside its set)
  identical,recreated=N
                 the same, and N spares re-created a replica and ran it to
                 the end
  identical,pulled
                 the same, and some collective run inside the replica sets
                 was completed by pulling blocks after a set was broken
  identical,...,stdin
                 the same, with text on the standard input of both runs
  identical,...,outside=P@S
                 the same, with process P SIGKILLed by this script (not by
                 rampart-run) S seconds after it started the program (its
                 start report, written at the end of its MPI_Init, is
                 there): the report counts it lost and says how soon a
                 survivor knew
  identical,...,stopped=P@S
                 the same, with process P stopped (SIGSTOP, a hung process)
                 by this script S seconds after it started the program:
                 rampart-run finds it stopped, kills it, and the report
                 counts it lost
  identical,...,outside=P@start
                 the same, with process P SIGKILLed as soon as it runs,
                 inside MPI_Init: rampart-run starts the job again and says
                 why
  identical,...,placed
                 the same, and where this machine has fewer cores than
                 processes but at least one per replica set, every set had
                 a core of its own, and spares kept their cores until they
                 re-created a replica
  lost=R         the job ends non-zero, naming rank R once as having lost
                 every replica
  detected       (--flip-bits, R = 2) the job stops with one report of
                 silent data corruption, after at least one flip
  unsupported=F  the job ends non-zero with one message naming call F
  error=TEXT     the job ends non-zero with one message containing TEXT
Every wait is bounded: a run that does not end within 60 s fails.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# rampart-run's own module (the first argument is rampart-run, in tools/).
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
from rampart_death_watch import job_processes  # noqa: E402
from session_run import run_in_session  # noqa: E402

LIMIT = 60
RETRY = Path(__file__).resolve().parent / "mpiexec_retry.sh"
STDIN = None  # what both runs get on their standard input (expectation flag stdin)


def run(cmd, env=None):
    p = run_in_session(cmd, LIMIT, env=env, stdin=STDIN)
    if p is None:
        fail(f"no end within {LIMIT} s (a hang): {' '.join(cmd)}")
    return p


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def kill_at_start(process, reports):
    """SIGKILLs the program's process `process` as soon as it runs, inside
    MPI_Init (found by the report path rampart-run gives its job, under
    `reports`, and its rank)."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        for d in glob.glob(f"{reports}/rampart-run-*"):
            for rank, pid in job_processes(f"{d}/rank"):
                if rank == process:
                    os.kill(pid, signal.SIGKILL)
                    return
        time.sleep(0.001)
    print(f"process {process} not killed: not found within {LIMIT} s")


def kill_from_outside(process, seconds, reports, sig=signal.SIGKILL):
    """SIGKILLs the program's process `process` (its rank in MPI_COMM_WORLD),
    as an operator or a crash would, `seconds` after its start report
    appeared under `reports` (rampart-run's folder of reports is made there):
    a process killed inside MPI_Init can hang MPI's others. The pid is the
    one that report names: tests run side by side, and another job's process
    of the same program and rank must not be the one killed."""
    deadline = time.monotonic() + LIMIT
    pid = None
    while time.monotonic() < deadline and pid is None:
        for f in glob.glob(f"{reports}/rampart-run-*/rank.replica.{process}.json"):
            try:
                pid = int(json.loads(Path(f).read_text())["pid"])
            except (OSError, ValueError, KeyError):
                pass  # being written: read again
        time.sleep(0.01)
    if pid is None:
        print(f"process {process} not killed: no start report within {LIMIT} s")
        return
    time.sleep(seconds)
    os.kill(pid, sig)


def checksum(text):
    found = re.findall(r"checksum ([0-9a-f]{16})", text)
    return found[-1] if found else None


def native(mpiexec, n, program):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Started again if Open MPI's launcher itself fails to start (rampart-run
    # does the same for the replicated run).
    p = run([str(RETRY), mpiexec, "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp", "-n", str(n)]
            + program, env)
    ref = checksum(p.stdout)
    if p.returncode != 0 or not ref:
        fail(f"the native run failed (exit {p.returncode}): {p.stdout[-2000:]}")
    return ref


def check_placement(report, options):
    """Each replica set on cores of its own, when this machine is crowded
    enough for the library to place the sets (as many cores as sets, fewer
    than processes); spares where they were started."""
    cores = os.sched_getaffinity(0)
    replicas = int(options[options.index("--replicas") + 1])
    processes = len(report["cores"])
    if not replicas <= len(cores) < processes:
        print(f"placement not checked: {len(cores)} cores for {processes} processes of {replicas} sets")
        return
    of_set = {}
    for p in report["cores"]:
        if p["rank"] < 0:
            if set(p["cores"]) != cores:
                fail(f"spare {p['process']} ran on cores {p['cores']}, not on every core {sorted(cores)}")
        elif not p["cores"]:
            fail(f"process {p['process']} reported no cores")
        else:
            of_set.setdefault(p["replica"], set()).update(p["cores"])
    if sorted(of_set) != list(range(replicas)):
        fail(f"sets placed: {sorted(of_set)}, expected {replicas}")
    for s, mine in of_set.items():
        others = set().union(*(c for t, c in of_set.items() if t != s))
        if not mine - others:
            fail(f"set {s} has no core of its own: {sorted(mine)}, the others {sorted(others)}")
    print("placed: " + ", ".join(f"set {s} on cores {sorted(c)}" for s, c in sorted(of_set.items())))


def main():
    global STDIN
    rampart_run, mpiexec, library, expect = sys.argv[1:5]
    if "stdin" in expect.split(","):
        STDIN = "".join(f"line {i} of the standard input\n" for i in range(2000)) + "end\n"
    rest = sys.argv[5:]
    split = rest.index("--")
    options, program = rest[:split], rest[split + 1:]
    n = int(options[options.index("-n") + 1])
    kills = [options[i + 1] for i, o in enumerate(options) if o == "--kill"]
    outside = [f.split("=")[1] for f in expect.split(",") if f.startswith("outside=")]
    stopped = [f.split("=")[1] for f in expect.split(",") if f.startswith("stopped=")]
    reports = tempfile.mkdtemp(prefix="test-replication-")
    for order in outside:
        process, seconds = order.split("@")
        if seconds == "start":
            threading.Thread(target=kill_at_start, args=(int(process), reports), daemon=True).start()
        else:
            threading.Thread(target=kill_from_outside, args=(int(process), float(seconds), reports),
                             daemon=True).start()
    for order in stopped:
        process, seconds = order.split("@")
        threading.Thread(target=kill_from_outside, args=(int(process), float(seconds), reports, signal.SIGSTOP),
                         daemon=True).start()
    p = run([rampart_run, "--replica-lib", library, "--mpiexec", mpiexec, "--json"] + options + ["--"] + program,
            dict(os.environ, TMPDIR=reports))
    shutil.rmtree(reports, ignore_errors=True)
    print(p.stderr[-3000:])
    lines = p.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
    if report is None:
        fail(f"rampart-run printed no report (exit {p.returncode})")
    recreated, pulled, placed = None, False, False
    if expect.startswith("identical,"):
        flags = expect.split(",")[1:]
        expect = "identical"
        for flag in flags:
            if flag.startswith("recreated="):
                recreated = int(flag.split("=")[1])
            elif flag == "pulled":
                pulled = True
            elif flag == "placed":
                placed = True
            elif flag == "stdin" or flag.startswith("outside=") or flag.startswith("stopped="):
                pass
            else:
                fail(f"unknown expectation {flag}")
    if expect == "identical":
        ref = native(mpiexec, n, program)
        got = checksum(p.stdout)
        print(f"native checksum {ref}, replicated {got}; processes killed {report['processes_killed']}")
        if p.returncode != 0:
            fail(f"exit code {p.returncode}")
        if got != ref:
            fail(f"checksum {got} differs from the native {ref}")
        if len(report["processes_killed"]) < len(kills):
            fail(f"{len(kills)} kills ordered, {len(report['processes_killed'])} done: the faults did not happen")
        if "--flip-bits" in options and (report["bits_flipped"] < 1 or report["corruptions_detected"] < 1):
            fail(f"flips {report['bits_flipped']}, corrections {report['corruptions_detected']}: none handled")
        if not kills and not outside and not stopped and "--flip-bits" not in options:  # nothing to recover from: no recovery may have run
            for key in ("collectives_pulled", "messages_resent", "duplicates_dropped"):
                if report[key] > 0:
                    fail(f"{key}: {report[key]} in a run without crashes")
        for order in outside:
            process, when = order.split("@")
            if when == "start":  # inside MPI_Init: the job is started again
                if report.get("restarts", 0) < 1 or "ended during MPI's start-up" not in p.stderr:
                    fail(f"process {process}, killed inside MPI_Init, did not make the job start again "
                         f"(restarts: {report.get('restarts')})")
                print(f"process {process} killed inside MPI_Init: the job started {report['restarts'] + 1} times")
                continue
            if int(process) not in report["processes_lost"] or process not in report["lost_detect_ms"]:
                fail(f"process {process}, killed from outside, is not in the report's lost processes "
                     f"{report['processes_lost']} with a detection time {report['lost_detect_ms']}")
            print(f"process {process} killed from outside, known lost {report['lost_detect_ms'][process]} ms after")
        for order in stopped:
            process = int(order.split("@")[0])
            if process not in report["stopped_processes_killed"] or process not in report["processes_lost"]:
                fail(f"process {process}, stopped from outside, was not found stopped and killed "
                     f"({report['stopped_processes_killed']}) or is not lost ({report['processes_lost']})")
            print(f"process {process} stopped from outside: found and killed, known lost "
                  f"{report['lost_detect_ms'].get(str(process))} ms after its death")
        if pulled and report["collectives_pulled"] < 1:
            fail(f"no collective was pulled ({report['collectives_in_set']} ran inside the sets)")
        done = [r for r in report["replicas_recreated"] if r["ran_to_end"]]
        if recreated is not None and len(done) != recreated:
            fail(f"{len(done)} replicas re-created and run to the end, expected {recreated}: "
                 f"{report['replicas_recreated']}")
        if recreated:
            print(f"re-created: {done}")
        if placed:
            check_placement(report, options)
        print(f"PASS: identical to the native run, {len(report['processes_killed'])} processes killed, "
              f"{report['messages_resent']} messages sent again, {report['bits_flipped']} bits flipped, "
              f"{report['collectives_pulled']} collectives pulled")
    elif expect.startswith("lost="):
        rank = expect.split("=")[1]
        said = p.stderr.count(f"rank {rank} lost every replica")
        if p.returncode == 0 or said != 1:
            fail(f"exit {p.returncode}, the loss of rank {rank} named {said} times (expected non-zero and once)")
        print(f"PASS: ended with exit code {p.returncode}, naming rank {rank} once")
    elif expect == "detected":
        said = p.stderr.count("silent data corruption detected")
        if p.returncode == 0 or said != 1 or report["bits_flipped"] < 1:
            fail(f"exit {p.returncode}, reported {said} times, {report['bits_flipped']} bits flipped")
        print(f"PASS: stopped with exit code {p.returncode} after {report['bits_flipped']} flips, reported once")
    elif expect.startswith("unsupported="):
        call = expect.split("=")[1]
        said = p.stderr.count(f"{call} is not supported")
        if p.returncode == 0 or said < 1 or "returned" in p.stdout:
            fail(f"exit {p.returncode}, {call} named {said} times")
        print(f"PASS: ended with exit code {p.returncode}, naming {call}")
    elif expect.startswith("error="):
        text = expect.split("=", 1)[1]
        said = p.stderr.count(text)
        if p.returncode == 0 or said != 1:
            fail(f"exit {p.returncode}, '{text}' said {said} times (expected non-zero and once)")
        print(f"PASS: ended with exit code {p.returncode}, saying '{text}' once")
    else:
        fail(f"unknown expectation {expect}")


if __name__ == "__main__":
    main()
