#!/usr/bin/env python3
"""Files under process replication: a program that reads input.txt and
writes a file per rank runs natively in one fresh directory, then under
rampart-run --replicas R --replica-dirs in another, with the given kills.
Every file the native run wrote must be in the replicated run's directory
with the same bytes, and in the directory of every replica set that the
report calls whole; with a replica of set 0 killed, set 0 is not whole and
another set is.

usage: replica_files.py RAMPART_RUN MPIEXEC LIBRARY PROGRAM -n N --replicas R [rampart-run options]
"""
import filecmp
import json
import os
import sys
import tempfile
from pathlib import Path

from session_run import run_in_session

LIMIT = 60
RETRY = Path(__file__).resolve().parent / "mpiexec_retry.sh"


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def run(cmd, cwd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = run_in_session(cmd, LIMIT, cwd=cwd, env=env)
    if p is None:
        fail(f"no end within {LIMIT} s: {' '.join(cmd)}")
    if p.returncode != 0:
        fail(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def written(d):
    return sorted(f.name for f in Path(d).iterdir() if f.is_file() and not f.is_symlink() and f.name != "input.txt"
                  and not f.name.startswith("."))


def main():
    rampart_run, mpiexec, library, program = sys.argv[1:5]
    options = sys.argv[5:]
    ranks = options[options.index("-n") + 1]
    with tempfile.TemporaryDirectory() as top:
        native, replicated = Path(top) / "native", Path(top) / "replicated"
        for d in (native, replicated):
            d.mkdir()
            (d / "input.txt").write_text("17\n")
        # Started again if Open MPI's launcher itself fails to start.
        run([str(RETRY), mpiexec, "--oversubscribe", "-n", ranks, program], native)
        p = run([rampart_run, "--json", "--replica-lib", library, "--replica-dirs", ".replicas", *options, "--",
                 program], replicated)
        report = json.loads(p.stdout.strip().splitlines()[-1])
        expected = written(native)
        if len(expected) < 2:
            fail(f"the native run wrote {expected}")
        whole = report["complete_sets"]
        killed_in_set_0 = any(k.split(".")[1].startswith("0@") for k in options if k.count(".") == 1 and "@" in k)
        if not whole or (killed_in_set_0 and 0 in whole):
            fail(f"whole replica sets {whole} with options {options}")
        for k in whole:
            d = Path(report["replica_dirs"][str(k)])
            for name in expected:
                if not (d / name).is_file() or not filecmp.cmp(native / name, d / name, shallow=False):
                    fail(f"{name} of replica set {k} ({d}) differs from the native run's")
        print(f"PASS: {len(expected)} files, as the native run wrote them, in the directories of replica sets {whole}"
              f" (processes lost {report['processes_lost']})")


if __name__ == "__main__":
    main()
