#!/usr/bin/env python3
"""Fault campaigns (rampart-run --campaign) of the distributed programs, as a
user would run them: random kills at random ranks, times and iterations,
and soft errors. Each campaign compares every run's checksum with its
fault-free run and counts identical / different / hang / error runs.

  stencil, 4 ranks + 1 spare, one random kill per run
  stencil, 4 ranks + 2 spares, two random kills per run
  stencil with checkpoints every 20 iterations, 4 ranks + 1 spare, one kill
  Smith-Waterman, 4 ranks + 1 spare, one random kill per run
  stencil with 10% soft errors and enough replays (1 and 4 ranks)
  stencil with 10% soft errors and too few replays (1 and 4 ranks): every
  run must end with one message soon after the task that failed for good

Writes bench/results/campaigns.json.

usage: bench/run_campaigns.py [build-dir] [scale=1.0] [too_few]
  scale multiplies the run counts; "too_few" runs only the runs with too few
  replays again, into the recorded file
"""
import json
import os
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
stencil = [str(build / "apps/rampart-stencil1d"), "--subdomains", "24", "--iterations", "200", "--threads", "1",
           "--json"]
sw = [str(build / "apps/rampart-smith-waterman"), "--length-a", "4000", "--length-b", "4000", "--tile", "100",
      "--threads", "1", "--json"]

CAMPAIGNS = [
    ("stencil, one kill", 200, ["-n", "4", "--spares", "1", "--kill-random", "1"], stencil + ["--variant", "replay"]),
    ("stencil, two kills", 50, ["-n", "4", "--spares", "2", "--kill-random", "2"], stencil + ["--variant", "replay"]),
    ("stencil with checkpoints, one kill", 50, ["-n", "4", "--spares", "1", "--kill-random", "1"],
     stencil + ["--variant", "replay", "--checkpoint-every", "20"]),
    ("Smith-Waterman, one kill", 50, ["-n", "4", "--spares", "1", "--kill-random", "1"], sw + ["--variant", "replay"]),
    ("stencil, 10% soft errors, 20 replays, 4 ranks", 20, ["-n", "4", "--error-rate", "0.1"],
     stencil + ["--variant", "replay", "--replays", "20"]),
    ("stencil, 10% soft errors, 20 replays, 1 rank", 20, ["-n", "1", "--error-rate", "0.1"],
     stencil + ["--variant", "replay", "--replays", "20"]),
]


def campaign(name, runs, opts, prog, seed):
    n = max(1, round(runs * SCALE))
    cmd = [sys.executable, str(runner), "--threads", "1", "--campaign", str(n), "--seed", str(seed), "--json"] + opts
    p = subprocess.run(cmd + ["--"] + prog, capture_output=True, text=True)
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(f"{name}: the campaign gave no report (exit code {p.returncode})", flush=True)
        return {"name": name, "runs": n, "exit_code": p.returncode, "stderr_tail": p.stderr.splitlines()[-30:],
                "stdout_tail": p.stdout.splitlines()[-5:]}
    fired = sum(r["kills_fired"] for r in out["runs"])
    print(f"{name}: {n} runs: {out['counts']}, median {out['median_seconds']} s, kills fired {fired}", flush=True)
    bad = [r for r in out["runs"] if r["outcome"] != "identical"]
    return {"name": name, "runs": n, "options": " ".join(opts), "program": " ".join([Path(prog[0]).name] + prog[1:]),
            "seed": seed, "counts": out["counts"], "median_seconds": out["median_seconds"],
            "fault_free_seconds": out["reference"]["seconds"], "kills_fired": fired, "exit_code": p.returncode,
            "bad_runs": bad}


def too_few_replays(ranks, runs):
    """Soft errors at 10% with 2 attempts per task: some task fails for good in
    every run. Each run must end, with one message, soon after that task."""
    rows = []
    for seed in range(1, max(1, round(runs * SCALE)) + 1):
        cmd = [sys.executable, str(runner), "-n", str(ranks), "--threads", "1", "--error-rate", "0.1", "--seed",
               str(seed), "--json", "--"] + stencil + ["--variant", "replay", "--replays", "2"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            rows.append({"seed": seed, "outcome": "hang"})
            continue
        lines = p.stdout.strip().splitlines()
        if not lines or not lines[-1].startswith("{"):
            rows.append({"seed": seed, "outcome": "no report", "exit_code": p.returncode,
                         "stderr_tail": p.stderr.splitlines()[-20:]})
            continue
        r = json.loads(lines[-1])
        messages = sum("task failed in all" in line for line in p.stderr.splitlines())
        rows.append({"seed": seed, "outcome": "error" if r["exit_code"] else "completed", "exit_code": r["exit_code"],
                     "failed_ranks": r["failed_ranks"], "failure_to_end_ms": r["failure_to_end_ms"],
                     "messages": messages, "seconds": r["seconds"]})
    ends = sorted(x["failure_to_end_ms"] for x in rows if x.get("failure_to_end_ms") is not None)
    summary = {"ranks": ranks, "runs": len(rows), "hangs": sum(x["outcome"] == "hang" for x in rows),
               "ended_with_an_error": sum(x["outcome"] == "error" for x in rows),
               "runs_with_one_message": sum(x.get("messages") == 1 for x in rows),
               "failure_to_end_ms": {"median": ends[len(ends) // 2] if ends else None, "max": max(ends, default=None)}}
    print(f"too few replays, {ranks} rank(s): {summary}", flush=True)
    return {"summary": summary, "runs": rows}


ONLY = sys.argv[3] if len(sys.argv) > 3 else None  # "too_few": only those runs, into the recorded file
if ONLY == "too_few":
    report = json.loads((root / "bench/results/campaigns.json").read_text())
    report["too_few_replays"] = [too_few_replays(1, 20), too_few_replays(4, 20)]
    (root / "bench/results/campaigns.json").write_text(json.dumps(report, indent=1) + "\n")
    sys.exit(0)
results = [campaign(name, runs, opts, prog, seed) for seed, (name, runs, opts, prog) in enumerate(CAMPAIGNS, 1)]
report = {
    "command": f"bench/run_campaigns.py {build} {SCALE}",
    "machine": f"{os.cpu_count()} cores (up to 6 processes oversubscribed)",
    "campaigns": results,
    "too_few_replays": [too_few_replays(1, 20), too_few_replays(4, 20)],
}
(root / "bench/results/campaigns.json").write_text(json.dumps(report, indent=1) + "\n")
