#!/usr/bin/env python3
"""Crash recovery of the distributed rampart-stencil1d: 4 ranks + 1 spare,
32 subdomains of 2000 points per rank, 1000 iterations of 16 steps, 1 worker
thread per rank. Rank 2 is killed with SIGKILL at iteration 500 (the middle).
Interleaved with each crash run: the same run without a kill (with the spare
and the send log), and without spares (no log). Records the phases of each
recovery as rampart-run reports them and the run times; writes
bench/results/recovery.json.

usage: bench/run_recovery.py [build-dir] [repeat=10]
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 10
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
RANKS, KILL_RANK, ITERATIONS, KILL_AT = 4, 2, 1000, 500
app = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * RANKS), "--points", "2000",
       "--iterations", str(ITERATIONS), "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]


def run(spares, kill):
    cmd = [sys.executable, str(runner), "-n", str(RANKS), "--spares", str(spares), "--threads", "1", "--json"]
    if kill:
        cmd += ["--kill", kill]
    out = subprocess.run(cmd + ["--"] + app, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


runs = {"no_spares": [], "spare_no_kill": [], "spare_kill": []}
for i in range(REPEAT):
    runs["no_spares"].append(run(0, None))
    runs["spare_no_kill"].append(run(1, None))
    r = run(1, f"{KILL_RANK}@iter{KILL_AT}")
    runs["spare_kill"].append(r)
    print(f"run {i + 1}: recover {r['recover_ms']} ms (detect {r['detect_ms']}, agree {r['agree_ms']}, "
          f"take-over {r['takeover_ms']}, re-send {r['resend_ms']}), program {r['result']['seconds']:.3f} s, "
          f"checksum {r['result']['checksum']}", flush=True)

med = lambda xs: statistics.median(xs)
checksums = {k: sorted({r["result"]["checksum"] for r in v}) for k, v in runs.items()}
free = med([r["result"]["seconds"] for r in runs["spare_no_kill"]])
crash = med([r["result"]["seconds"] for r in runs["spare_kill"]])
# The replacement computes iterations 0..KILL_AT again; at the fault-free pace
# that takes KILL_AT/ITERATIONS of the fault-free run.
recompute = free * KILL_AT / ITERATIONS
report = {
    "command": f"bench/run_recovery.py {build} {REPEAT}",
    "config": f"{RANKS} ranks + 1 spare, 32 subdomains x 2000 points per rank, {ITERATIONS} iterations x 16 steps, "
              f"1 worker thread per rank, dataflow; rank {KILL_RANK} killed (SIGKILL) at iteration {KILL_AT}",
    "machine": f"{os.cpu_count()} cores (5 processes oversubscribed)",
    "repeat": REPEAT,
    "median_ms": {k: med([r[k] for r in runs["spare_kill"]])
                  for k in ("detect_ms", "agree_ms", "takeover_ms", "resend_ms", "recover_ms")},
    "median_seconds": {"no_spares": med([r["result"]["seconds"] for r in runs["no_spares"]]),
                       "spare_no_kill": free, "spare_kill": crash},
    "crash_run_over_fault_free_seconds": crash - free,
    "replacement_recomputation_seconds": recompute,
    "limit_seconds": recompute + 0.5,
    "median_send_log_bytes": med([r["send_log_bytes"] for r in runs["spare_kill"]]),
    "median_messages_resent": med([r["messages_resent"] for r in runs["spare_kill"]]),
    "checksums": checksums,
    "runs": {k: [{"seconds": r["result"]["seconds"], "recover_ms": r["recover_ms"], "detect_ms": r["detect_ms"],
                  "agree_ms": r["agree_ms"], "takeover_ms": r["takeover_ms"], "resend_ms": r["resend_ms"]}
                 for r in v] for k, v in runs.items()},
}
(root / "bench/results/recovery.json").write_text(json.dumps(report, indent=1) + "\n")
print(json.dumps({k: report[k] for k in ("median_ms", "median_seconds", "crash_run_over_fault_free_seconds",
                                          "limit_seconds", "median_send_log_bytes", "checksums")}))
