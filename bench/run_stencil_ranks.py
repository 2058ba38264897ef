#!/usr/bin/env python3
"""Weak scaling of the distributed rampart-stencil1d on 1, 2 and 4 ranks, one
worker thread per rank, plain dataflow against replay, in two shapes:

- fine: 32 subdomains x 2000 points per rank, 1000 iterations x 16 steps
  (a task of about 10 us, a message every 75 us per rank: the hard case);
- paper: the HPX paper's per-node shape, 128 subdomains x 16000 points,
  128 steps per iteration, 40 iterations instead of 4096.

The variants run interleaved, so that drifts of the machine hit both alike.
Records the run time and the communication engines' share of the process CPU
time; writes bench/results/stencil_ranks.json.

usage: bench/run_stencil_ranks.py [build-dir]
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
SHAPES = {
    "fine": {"subdomains": 32, "points": 2000, "iterations": 1000, "steps": 16, "repeat": 7},
    "paper": {"subdomains": 128, "points": 16000, "iterations": 40, "steps": 128, "repeat": 3},
}
VARIANTS = ("dataflow", "replay")


def run(shape, ranks, variant):
    cmd = [sys.executable, str(runner), "-n", str(ranks), "--threads", "1", "--json", "--",
           str(build / "apps/rampart-stencil1d"), "--subdomains", str(shape["subdomains"] * ranks),
           "--points", str(shape["points"]), "--iterations", str(shape["iterations"]),
           "--steps", str(shape["steps"]), "--variant", variant, "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["result"]


rows = {}
for name, shape in SHAPES.items():
    for ranks in (1, 2, 4):
        runs = {v: [] for v in VARIANTS}
        for _ in range(shape["repeat"]):
            for v in VARIANTS:
                runs[v].append(run(shape, ranks, v))
        base = statistics.median(r["seconds"] for r in runs["dataflow"])
        for v in VARIANTS:
            seconds = statistics.median(r["seconds"] for r in runs[v])
            share = statistics.median(100 * r["comm_cpu_seconds"] / r["cpu_seconds"] for r in runs[v])
            rows[f"{name}_{v}_ranks{ranks}"] = {
                "shape": name, "variant": v, "ranks": ranks, "median_seconds": seconds,
                "over_dataflow_percent": 100 * (seconds / base - 1), "median_comm_cpu_percent": share,
                "runs_seconds": [r["seconds"] for r in runs[v]],
                "checksums": sorted({r["checksum"] for r in runs[v]})}
            print(f"{name:5s} {v:8s} {ranks} ranks  {seconds:.3f} s  ({100 * (seconds / base - 1):+.1f}%)  "
                  f"engine CPU {share:.2f}% of process CPU", flush=True)
report = {"command": "bench/run_stencil_ranks.py " + str(build),
          "shapes": {k: {**v, "per": "rank"} for k, v in SHAPES.items()},
          "threads_per_rank": 1, "launcher": "tools/rampart-run --threads 1 (binds each rank to a core)",
          "machine": f"{os.cpu_count()} cores", "rows": rows}
(root / "bench/results/stencil_ranks.json").write_text(json.dumps(report, indent=1) + "\n")
