#!/usr/bin/env python3
"""Hung ranks under the heartbeat detector (rampart-run --detect-hangs): the
distributed rampart-stencil1d on 4 ranks + 1 spare, 1000 iterations, 1 worker
thread per rank. In each hang run one rank stops itself with SIGSTOP at a
random iteration (seeded); MPI's detector declares it dead, a survivor kills
it, the spare takes over. Records per run the time from the stop to the kill,
whether the checksum equals the fault-free run's, and the run time; the same
number of fault-free runs with the detector gives its cost at the end of a
job. Counts the restarts of jobs in which MPI failed to start. Writes
bench/results/hangs.json.

usage: bench/run_hangs.py [build-dir] [repeat=20]
"""
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 20
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
RANKS, ITERATIONS = 4, 1000
app = [str(build / "apps/rampart-stencil1d"), "--iterations", str(ITERATIONS), "--threads", "1", "--variant",
       "replay", "--json"]
RESTARTED = "failed to start"


def run(detect, hang=None):
    cmd = [sys.executable, str(runner), "-n", str(RANKS), "--spares", "1", "--threads", "1", "--json"]
    if detect:
        cmd.append("--detect-hangs")
    if hang:
        cmd += ["--hang", hang]
    p = subprocess.run(cmd + ["--"] + app, capture_output=True, text=True, timeout=120)
    report = json.loads(p.stdout.strip().splitlines()[-1])
    report["restarts"] = p.stderr.count(RESTARTED)
    return report


reference = run(False)["result"]["checksum"]
rng = random.Random(12)
runs = {"detector_no_fault": [], "no_detector_no_fault": [], "hang": []}
for i in range(REPEAT):
    runs["no_detector_no_fault"].append(run(False))
    runs["detector_no_fault"].append(run(True))
    rank, at = rng.randrange(RANKS), rng.randrange(100, 900)
    r = run(True, f"{rank}@iter{at}")
    r["hang_at"] = f"{rank}@iter{at}"
    runs["hang"].append(r)
    h = r["hangs_killed"][0] if r["hangs_killed"] else {}
    print(f"run {i + 1}: rank {rank} hung at iteration {at}, killed {h.get('killed_after_ms')} ms later, "
          f"{r['seconds']:.2f} s, checksum {r.get('result', {}).get('checksum')}, restarts {r['restarts']}", flush=True)

med = lambda xs: statistics.median(xs) if xs else None
killed = [r["hangs_killed"][0]["killed_after_ms"] for r in runs["hang"]
          if r["hangs_killed"] and r["hangs_killed"][0]["killed_after_ms"] is not None]
report = {
    "command": f"bench/run_hangs.py {build} {REPEAT}",
    "config": f"{RANKS} ranks + 1 spare, stencil replay variant, {ITERATIONS} iterations, 1 worker thread per rank; "
              "heartbeat detector period 0.1 s, timeout 0.4 s; one rank stopped (SIGSTOP) at a random iteration",
    "machine": f"{os.cpu_count()} cores (5 processes oversubscribed)",
    "repeat": REPEAT,
    "hang_killed_after_ms": {"median": med(killed), "min": min(killed, default=None), "max": max(killed, default=None),
                             "killed": len(killed)},
    "hang_runs_identical": sum(r.get("result", {}).get("checksum") == reference and r["exit_code"] == 0
                               for r in runs["hang"]),
    "median_seconds": {k: med([r["seconds"] for r in v]) for k, v in runs.items()},
    "restarts_after_failed_start": {k: sum(r["restarts"] for r in v) for k, v in runs.items()},
    "runs": {k: [{"seconds": r["seconds"], "exit_code": r["exit_code"], "checksum": r.get("result", {}).get("checksum"),
                  "hang_at": r.get("hang_at"), "hangs_killed": r["hangs_killed"], "restarts": r["restarts"]}
                 for r in v] for k, v in runs.items()},
}
(root / "bench/results/hangs.json").write_text(json.dumps(report, indent=1) + "\n")
print(json.dumps({k: report[k] for k in ("hang_killed_after_ms", "hang_runs_identical", "median_seconds",
                                          "restarts_after_failed_start")}))
