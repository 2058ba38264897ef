#!/usr/bin/env python3
"""rampart-run ends a job whose processes left are all stopped: rank 1 of a
stand-in program stops itself (SIGSTOP, as `--hang` does) and rank 0 ends.
Nobody can kill rank 1 but rampart-run, and mpiexec would wait for it
forever.

usage: test_stopped_ranks.py RAMPART_RUN
Prints PASS: at the end, or FAIL: and exits 1.
"""
import subprocess
import sys
import time

RUN = sys.argv[1]
PROGRAM = ("import os, signal\n"
           "rank = os.environ['OMPI_COMM_WORLD_RANK']\n"
           "open(os.environ['RAMPART_REPORT'] + '.start.' + rank, 'w').close()  # started, as rampart notes\n"
           "if rank == '1':\n"
           "    os.kill(os.getpid(), signal.SIGSTOP)\n")

start = time.monotonic()
try:
    run = subprocess.run([RUN, "-n", "2", "--", sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=40)
except subprocess.TimeoutExpired:
    print("FAIL: the job still waited for its stopped rank after 40 s")
    sys.exit(1)
seconds = time.monotonic() - start
print(run.stdout)
if "rank(s) 1, stopped (hung) and never killed by a survivor" not in run.stdout or "starting it again" in run.stdout:
    print("FAIL: rampart-run did not say that it killed the stopped rank 1")
    sys.exit(1)
print(f"PASS: the job ended {seconds:.1f} s after it started, its stopped rank killed")
