#!/usr/bin/env python3
"""Checkpoints for spares on the distributed rampart-stencil1d:
4 ranks + 1 spare, 32 subdomains of 2000 points per rank, 16 steps per
iteration, 1 worker thread per rank.

- Time saved: 1000 iterations, rank 2 killed with SIGKILL at iteration 900,
  the replacement either runs from the start (no checkpoints) or resumes from
  the newest checkpoint (every 100 iterations). Records the whole run's time
  (rampart-run), the stencil's time loop on rank 0, messages re-sent, and the
  send logs' bytes at the end, interleaved, medians of `repeat`.
- Log bounded: fault-free runs of 250, 500, 1000 and 2000 iterations with the
  spare (so the send log is on), with and without checkpoints every 100
  iterations: the send logs' bytes at the end (all ranks).

Writes bench/results/checkpoint.json and draws checkpoint.png.
usage: bench/run_checkpoint.py [build-dir] [repeat=5]
"""
import json
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 5
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
RANKS, KILL_RANK, ITERATIONS, KILL_AT, EVERY = 4, 2, 1000, 900, 100


def app(iterations, every):
    a = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * RANKS), "--points", "2000",
         "--iterations", str(iterations), "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]
    return a + (["--checkpoint-every", str(every)] if every else [])


def run(iterations, every, kill):
    cmd = [sys.executable, str(runner), "-n", str(RANKS), "--spares", "1", "--threads", "1", "--json"]
    if kill:
        cmd += ["--kill", kill]
    out = subprocess.run(cmd + ["--"] + app(iterations, every), check=True, capture_output=True, text=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    report["resumed"] = "from a checkpoint" in out.stderr + out.stdout
    return report


def summary(runs):
    med = lambda f: statistics.median(f(r) for r in runs)
    return {
        "runs": len(runs),
        "checksums": sorted({r["result"]["checksum"] for r in runs}),
        "median_run_s": med(lambda r: r["seconds"]),
        "median_loop_s": med(lambda r: r["result"]["seconds"]),
        "median_recover_ms": med(lambda r: r["recover_ms"] or 0) if runs[0].get("recover_ms") is not None else None,
        "median_messages_resent": med(lambda r: r["messages_resent"]),
        "median_send_log_bytes_end": med(lambda r: r["send_log_bytes"]),
        "resumed_from_checkpoint": all(r["resumed"] for r in runs),
    }


crash = {"from_start": [], "from_checkpoint": []}
for _ in range(REPEAT):
    crash["from_start"].append(run(ITERATIONS, 0, f"{KILL_RANK}@iter{KILL_AT}"))
    crash["from_checkpoint"].append(run(ITERATIONS, EVERY, f"{KILL_RANK}@iter{KILL_AT}"))
fault_free = run(ITERATIONS, 0, None)["result"]["checksum"]

growth = []
for iterations in (250, 500, 1000, 2000):
    for every in (0, EVERY):
        r = run(iterations, every, None)
        growth.append({"iterations": iterations, "checkpoint_every": every, "send_log_bytes_end": r["send_log_bytes"],
                       "run_s": r["seconds"]})

out = {
    "config": {"ranks": RANKS, "spares": 1, "subdomains_per_rank": 32, "points": 2000, "steps": 16,
               "iterations": ITERATIONS, "kill": f"{KILL_RANK}@iter{KILL_AT}", "checkpoint_every": EVERY,
               "repeat": REPEAT},
    "fault_free_checksum": fault_free,
    "crash": {k: summary(v) for k, v in crash.items()},
    "log_growth": growth,
}
a, b = out["crash"]["from_start"], out["crash"]["from_checkpoint"]
out["time_saved_s"] = a["median_run_s"] - b["median_run_s"]
dest = root / "bench" / "results" / "checkpoint.json"
dest.write_text(json.dumps(out, indent=1) + "\n")
print(json.dumps({k: out[k] for k in ("crash", "time_saved_s")}, indent=1))
for g in growth:
    print(g)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
labels = ["replacement runs\nfrom the start", f"resumes from a checkpoint\n(every {EVERY} iterations)"]
ax1.bar(labels, [a["median_run_s"], b["median_run_s"]], color=["tab:red", "tab:green"])
ax1.set_ylabel("run time (s), median")
ax1.set_title(f"{RANKS} ranks + 1 spare, rank {KILL_RANK} killed at iteration {KILL_AT} of {ITERATIONS}")
for every, style in ((0, "o-"), (EVERY, "s-")):
    pts = [g for g in growth if g["checkpoint_every"] == every]
    ax2.plot([g["iterations"] for g in pts], [g["send_log_bytes_end"] / 2**20 for g in pts], style,
             label="no checkpoints" if not every else f"checkpoint every {EVERY}")
ax2.set_xlabel("iterations")
ax2.set_ylabel("send logs at the end, all ranks (MiB)")
ax2.set_title("send log size (fault-free runs with a spare)")
ax2.legend()
fig.tight_layout()
fig.savefig(root / "bench" / "results" / "checkpoint.png", dpi=110)
print("wrote", dest)
