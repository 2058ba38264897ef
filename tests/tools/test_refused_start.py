#!/usr/bin/env python3
"""A program that refuses to start (its own message and exit code, before
rampart starts on any rank) is not started again, and its message is shown
once, not once per rank. A stand-in program on 3 ranks exits with code 3.

usage: test_refused_start.py RAMPART_RUN
Prints PASS: at the end, or FAIL: and exits 1.
"""
import subprocess
import sys

RUN = sys.argv[1]
PROGRAM = "import sys\nsys.exit('stand-in: cannot read its input file')\n"

run = subprocess.run([RUN, "-n", "3", "--", sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True, timeout=60)
print(run.stdout)
if run.returncode == 0:
    print("FAIL: exit code 0 for a program that refused to start")
    sys.exit(1)
if "starting it again" in run.stdout:
    print("FAIL: a program that refused to start was started again")
    sys.exit(1)
if run.stdout.count("stand-in: cannot read its input file") != 1:
    print("FAIL: the program's message is not shown exactly once")
    sys.exit(1)
if "ended before it started rampart on any rank" not in run.stdout:
    print("FAIL: rampart-run does not say that the program did not start")
    sys.exit(1)
print(f"PASS: exit code {run.returncode}, the message once, no second start")
