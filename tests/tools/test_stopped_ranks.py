#!/usr/bin/env python3
"""rampart-run ends a job whose processes left are all stopped, even with
--no-detect-hangs: rank 1 of a stand-in program stops itself (SIGSTOP, as
`--hang` does) and rank 0 ends. Nobody can kill rank 1 but rampart-run, and
mpiexec would wait for it forever. Without --no-detect-hangs, rampart-run
kills the stopped rank --hang-timeout seconds after it stopped, while rank 0
still runs.

usage: test_stopped_ranks.py RAMPART_RUN
Prints PASS: at the end, or FAIL: and exits 1.
"""
import os
import subprocess
import sys
import time

RUN = sys.argv[1]
PROGRAM = ("import os, signal, time\n"
           "rank = os.environ['OMPI_COMM_WORLD_RANK']\n"
           "open(os.environ['RAMPART_REPORT'] + '.start.' + rank, 'w').close()  # started, as rampart notes\n"
           "if rank == '1':\n"
           "    os.kill(os.getpid(), signal.SIGSTOP)\n"
           "time.sleep(float(os.environ['RANK0_SECONDS']))\n")


def job(options, rank0_seconds, expected):
    start = time.monotonic()
    try:
        run = subprocess.run([RUN, "-n", "2", *options, "--", sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=40,
                             env=dict(os.environ, RANK0_SECONDS=str(rank0_seconds)))
    except subprocess.TimeoutExpired:
        print(f"FAIL: with {options} the job still waited for its stopped rank after 40 s")
        sys.exit(1)
    seconds = time.monotonic() - start
    print(run.stdout)
    if expected not in run.stdout or "starting it again" in run.stdout:
        print(f"FAIL: with {options} rampart-run did not say '{expected}'")
        sys.exit(1)
    return seconds


left = job(["--no-detect-hangs"], 0, "rank(s) 1, stopped (hung) and never killed by a survivor")
found = job(["--hang-timeout", "1"], 5, "process(es) 1 found stopped (hung) for 1 s: killed")
print(f"PASS: with --no-detect-hangs the job ended {left:.1f} s after it started, its stopped rank killed once "
      f"every other process had ended; by default rampart-run killed the stopped rank while rank 0 still ran "
      f"({found:.1f} s)")
