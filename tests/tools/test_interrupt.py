#!/usr/bin/env python3
"""Ctrl-C (SIGINT to rampart-run's process group, as a terminal sends it)
or a SIGTERM to rampart-run alone ends the whole job with it, in both modes
(spares and --replicas): mpiexec, which runs in a session of its own, and
every process of the program; rampart-run says so and exits 128 + the
signal's number. The program is a stand-in that starts MPI (mpi4py), notes
its pid and sleeps.

usage: test_interrupt.py RAMPART_RUN PYTHON (with mpi4py)
Prints PASS: at the end, or FAIL: and exits 1.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

RUN, PYTHON = sys.argv[1], sys.argv[2]
PROGRAM = ("import os, time\n"
           "from mpi4py import MPI\n"
           "open(os.path.join(os.environ['PIDS'], str(os.getpid())), 'w').close()\n"
           "time.sleep(120)\n")


TOKEN = uuid.uuid4().hex  # in the environment of every process of the test's jobs
MARK = "RAMPART_INTERRUPT_TEST=" + TOKEN


def fail(why):
    for pid in marked(MARK):  # leave nothing of the job running
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    print("FAIL: " + why)
    sys.exit(1)


def marked(mark):
    """The living processes whose environment holds `mark` (rampart-run,
    mpiexec and the program's processes inherit it)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if mark.encode() in env and state != "Z":
            pids.append(int(d))
    return pids


def interrupt(mode, sig, processes):
    with tempfile.TemporaryDirectory() as pids:
        env = dict(os.environ, PIDS=pids, RAMPART_INTERRUPT_TEST=TOKEN)
        # A process group of its own, as a terminal gives a command.
        run = subprocess.Popen([RUN, "-n", "2", *mode, "--", PYTHON, "-c", PROGRAM], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        deadline = time.monotonic() + 60
        while len(os.listdir(pids)) < processes:
            if time.monotonic() > deadline or run.poll() is not None:
                run.kill()
                fail(f"{mode}: the program's {processes} processes did not all start: {run.communicate()[0]}")
            time.sleep(0.1)
        if len(marked(MARK)) < processes + 2:  # rampart-run, mpiexec and the program
            fail(f"{mode}: the job's processes are not found by their environment")
        if sig == signal.SIGINT:
            os.killpg(run.pid, sig)  # Ctrl-C: the terminal signals the foreground process group
        else:
            run.send_signal(sig)
        try:
            out = run.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired:
            run.kill()
            fail(f"{mode}: rampart-run did not end within 30 s of {sig.name}")
        print(out)
        time.sleep(0.5)  # what mpiexec was told to end has ended by now, or never will
        if left := marked(MARK):
            fail(f"{mode}: {sig.name} left processes of the job running: {left}")
        if run.returncode != 128 + sig:
            fail(f"{mode}: exit code {run.returncode} after {sig.name}, not {128 + sig}")
        if out.count(f"rampart-run: stopped by {sig.name}") != 1:
            fail(f"{mode}: rampart-run did not say once that {sig.name} stopped it")
        print(f"ok {mode or 'spares mode'}, {sig.name}: exit code {run.returncode}, nothing left")


for mode, processes in (([], 2), (["--replicas", "2"], 4)):
    for sig in (signal.SIGINT, signal.SIGTERM):
        interrupt(mode, sig, processes)
print("PASS: SIGINT and SIGTERM ended the whole job in both modes")
