#!/usr/bin/env python3
"""Runs the store's submit-then-kill scenario many times and counts the runs in
which every survivor agreed on one version and loaded every block byte for
byte (tests/mpi/store_submit_crash.cpp, step "returned": the victims die the
moment their submit of version 2 returns, so version 2 must be kept).

Writes bench/results/store_submit_crash.json: per configuration (victims, r)
the runs, the runs that passed, and the outcome of each failed run.

usage: bench/run_store_submit_crash.py [build-dir] [--runs 100] [--step returned]
                                       [--out bench/results/store_submit_crash.json] [--before FILE]
--before FILE puts the totals of an earlier run's file (such as one made
with the store before a change) into the new file as "before".
Every run has a deadline (60 s); a run past it counts as failed ("hang").
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
CONFIGS = [([1], 3), ([1], 4), ([0, 2], 3), ([0, 2], 4)]  # (victims, r) on 4 ranks


def mpiexec():
    venv = root / ".venv" / "bin" / "mpiexec"
    return str(venv) if venv.exists() else (shutil.which("mpiexec") or "mpiexec")


def one_run(a, victims, r):
    cmd = [str(root / "tests" / "mpi" / "mpiexec_retry.sh"), mpiexec(), "--with-ft", "ulfm", "--oversubscribe",
           "--mca", "btl", "self,sm,tcp", "-n", "4", str(Path(a.build) / "tests" / "test_store_submit_crash"),
           str(r), a.step] + [str(v) for v in victims]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        return False, "hang"
    out = p.stdout + p.stderr
    agreed = re.findall(r"rank (\d+): agreed on version (\d+), all \d+ blocks equal", out)
    passed = len(re.findall(r"rank \d+: PASS", out))
    survivors = 4 - len(victims)
    ok = (p.returncode == 0 and "FAIL" not in out and len(agreed) == survivors and passed == survivors
          and len({v for _, v in agreed}) == 1)
    if ok:
        return True, ""
    fails = sorted(set(re.findall(r"FAIL: ([^\n]*)", out)))
    return False, "; ".join(fails) or "exit code %d, %d of %d survivors agreed" % (p.returncode, len(agreed), survivors)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=100, help="in total, spread evenly over the 4 configurations")
    ap.add_argument("--step", default="returned")
    ap.add_argument("--out", default=str(root / "bench" / "results" / "store_submit_crash.json"))
    ap.add_argument("--before", help="an earlier run's file, whose totals go into the new one")
    ap.add_argument("--before-note", default="", help="what the earlier run was")
    a = ap.parse_args()
    rows, started = [], time.time()
    for i, (victims, r) in enumerate(CONFIGS):
        runs = a.runs // len(CONFIGS) + (1 if i < a.runs % len(CONFIGS) else 0)
        row = {"ranks": 4, "victims": victims, "replicas": r, "runs": runs, "all_survivors_load_every_block_exact": 0,
               "failures": []}
        for _ in range(runs):
            ok, why = one_run(a, victims, r)
            row["all_survivors_load_every_block_exact"] += ok
            if not ok:
                row["failures"].append(why)
        print("victims %s, r = %d: %d of %d runs passed" % (victims, r, row["all_survivors_load_every_block_exact"], runs),
              file=sys.stderr)
        rows.append(row)
    result = {
        "what": "submit of version 2, then the victims are SIGKILLed the moment their submit returns (step %s);"
                " a run passes when every survivor keeps the same version, the one returned, and loads every"
                " block byte for byte" % a.step,
        "step": a.step,
        "runs": sum(r["runs"] for r in rows),
        "all_survivors_load_every_block_exact": sum(r["all_survivors_load_every_block_exact"] for r in rows),
        "seconds": round(time.time() - started, 1),
        "configurations": rows,
    }
    if a.before:
        b = json.loads(Path(a.before).read_text())
        result["before"] = {"note": a.before_note, "runs": b["runs"],
                            "all_survivors_load_every_block_exact": b["all_survivors_load_every_block_exact"],
                            "failures": sorted({f for r in b["configurations"] for f in r["failures"]})}
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("runs", "all_survivors_load_every_block_exact", "seconds")}))
    return 0 if result["runs"] == result["all_survivors_load_every_block_exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
