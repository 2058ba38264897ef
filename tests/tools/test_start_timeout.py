#!/usr/bin/env python3
"""A job whose launcher never hears back from a host's daemon (the host
unreachable, its launch agent stuck) is stopped once --start-timeout has
passed, with one line that says why, in both modes (spares and
--replicas), and leaves no process behind. The stand-in launch agent
sleeps, as ssh to a host that does not answer does.

usage: test_start_timeout.py RAMPART_RUN PROGRAM
Prints PASS: at the end, or FAIL: and exits 1.
"""
import os
import subprocess
import sys
import tempfile
import time

RUN, PROGRAM = sys.argv[1], sys.argv[2]
TIMEOUT = 3


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def alive(pid):
    """Whether the process runs (a zombie, killed and not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


with tempfile.TemporaryDirectory() as tmp:
    agent, pids = os.path.join(tmp, "stuck-agent"), os.path.join(tmp, "agent-pids")
    with open(agent, "w") as f:
        f.write(f"#!/bin/sh\n# never answers; notes its pid\necho $$ >> {pids}\nexec sleep 600\n")
    os.chmod(agent, 0o755)
    for mode in ([], ["--replicas", "2"]):
        began = time.monotonic()
        run = subprocess.run([RUN, "-n", "2", *mode, "--hosts", "192.0.2.10:2,192.0.2.11:2", "--launch-agent", agent,
                              "--start-timeout", str(TIMEOUT), "--", PROGRAM], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60)
        took = time.monotonic() - began
        print(run.stdout)
        if run.returncode == 0:
            fail(f"exit code 0 for a job that never started ({mode})")
        if run.stdout.count(f"no process of the program started within {TIMEOUT} s") != 1:
            fail(f"the cause is not said exactly once ({mode})")
        if "192.0.2.10" not in run.stdout:
            fail("the job's hosts are not named")
        if "starting it again" in run.stdout:
            fail("a job whose hosts did not answer was started again")
        if took > TIMEOUT + 20:
            fail(f"stopped {took:.0f} s after its start, for a limit of {TIMEOUT} s")
        with open(pids) as f:
            agents = [int(x) for x in f.read().split()]
        if not agents:
            fail("the launch agent never ran")
        if left := [p for p in agents if alive(p)]:
            fail(f"launch agents left running: {left}")
        print(f"ok {mode or 'spares mode'}: exit code {run.returncode} after {took:.1f} s")
print("PASS: both modes stopped with the cause named once, nothing left behind")
