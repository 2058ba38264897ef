#!/usr/bin/env python3
"""Weak scaling of the distributed rampart-stencil1d: 32 subdomains of 2000
points per rank, 1000 iterations of 16 steps, 1 worker thread per rank, on 1,
2 and 4 ranks, plain dataflow and replay, medians of 3. Records the run time
and the share of CPU time spent by the communication engines; writes
bench/results/stencil_ranks.json.

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
REPEAT = 3
rows = {}
for ranks in (1, 2, 4):
    for variant in ("dataflow", "replay"):
        runs = []
        for _ in range(REPEAT):
            cmd = [sys.executable, str(runner), "-n", str(ranks), "--threads", "1", "--json", "--",
                   str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * ranks), "--points", "2000",
                   "--iterations", "1000", "--steps", "16", "--variant", variant, "--json"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])["result"]
            runs.append(result)
        seconds = statistics.median(r["seconds"] for r in runs)
        share = statistics.median(100 * r["comm_cpu_seconds"] / r["cpu_seconds"] for r in runs)
        rows[f"{variant}_ranks{ranks}"] = {"variant": variant, "ranks": ranks, "median_seconds": seconds,
                                           "median_comm_cpu_percent": share,
                                           "runs_seconds": [r["seconds"] for r in runs],
                                           "checksums": sorted({r["checksum"] for r in runs})}
        print(f"{variant:9s} {ranks} ranks  {seconds:.3f} s  engine CPU {share:.2f}% of process CPU", flush=True)
report = {"command": "bench/run_stencil_ranks.py " + str(build), "repeat": REPEAT,
          "per_rank": "32 subdomains x 2000 points, 1000 iterations x 16 steps, 1 worker thread",
          "machine": f"{os.cpu_count()} cores", "rows": rows}
(root / "bench/results/stencil_ranks.json").write_text(json.dumps(report, indent=1) + "\n")
