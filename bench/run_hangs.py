#!/usr/bin/env python3
"""Hung ranks: the distributed rampart-stencil1d on 4 ranks + 1 spare, 1000
iterations, 1 worker thread per rank. In each hang run one rank stops itself
with SIGSTOP at a random iteration (seeded) and the spare takes over once it
is killed: by rampart-run, which kills a process stopped for --hang-timeout
(0.4 s, the default), or with --detect-hangs also by a survivor once MPI's
heartbeat detector declared it dead. Records per run the time from the stop
to the kill, whether the checksum equals the fault-free run's, and the run
time. Fault-free runs without any watch (--no-detect-hangs), with the
default watch and with the detector give their costs, and count the healthy
processes declared hung (false alarms). With --load N, N busy processes run
beside every job (a loaded machine). Counts the restarts of jobs in which
MPI failed to start. Writes bench/results/hangs.json (hangs_loaded.json
with --load).

usage: bench/run_hangs.py [build-dir] [repeat=20] [--load N]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

parser = argparse.ArgumentParser(description="Hung ranks found and recovered from (bench/results/hangs.json).")
parser.add_argument("build", nargs="?", default="build")
parser.add_argument("repeat", nargs="?", type=int, default=20)
parser.add_argument("--load", type=int, default=0, help="busy processes beside every job")
args = parser.parse_args()
LOAD = args.load
build = Path(args.build)
REPEAT = args.repeat
root = Path(__file__).resolve().parent.parent
runner = root / "tools" / "rampart-run"
RANKS, ITERATIONS = 4, 1000
app = [str(build / "apps/rampart-stencil1d"), "--iterations", str(ITERATIONS), "--threads", "1", "--variant",
       "replay", "--json"]
RESTARTED = "failed to start"
MODES = {"no_watch_no_fault": ["--no-detect-hangs"], "watch_no_fault": [], "detector_no_fault": ["--detect-hangs"],
         "hang_watch": [], "hang_detector": ["--detect-hangs"]}


def run(options, hang=None):
    cmd = [sys.executable, str(runner), "-n", str(RANKS), "--spares", "1", "--threads", "1", "--json", *options]
    if hang:
        cmd += ["--hang", hang]
    p = subprocess.run(cmd + ["--"] + app, capture_output=True, text=True, timeout=120)
    report = json.loads(p.stdout.strip().splitlines()[-1])
    report["restarts"] = p.stderr.count(RESTARTED)
    return report


def killed_after(r):
    h = r["hangs_killed"][0] if r["hangs_killed"] else {}
    return h.get("killed_after_ms")


burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(LOAD)]
try:
    reference = run(["--no-detect-hangs"])["result"]["checksum"]
    rng = random.Random(12)
    runs = {mode: [] for mode in MODES}
    for i in range(REPEAT):
        rank, at = rng.randrange(RANKS), rng.randrange(100, 900)
        for mode, options in MODES.items():
            hang = f"{rank}@iter{at}" if mode.startswith("hang") else None
            r = run(options, hang)
            r["hang_at"] = hang
            runs[mode].append(r)
            print(f"run {i + 1} {mode}: {'hang ' + hang + ', killed ' + str(killed_after(r)) + ' ms later, ' if hang else ''}"
                  f"{r['seconds']:.2f} s, checksum {r.get('result', {}).get('checksum')}, "
                  f"stopped processes killed {r['stopped_processes_killed']}, restarts {r['restarts']}", flush=True)
finally:
    for b in burners:
        b.kill()

med = lambda xs: statistics.median(xs) if xs else None


def kill_times(mode):
    killed = [killed_after(r) for r in runs[mode] if killed_after(r) is not None]
    return {"median": med(killed), "min": min(killed, default=None), "max": max(killed, default=None),
            "killed": len(killed)}


report = {
    "command": f"bench/run_hangs.py {build} {REPEAT}" + (f" --load {LOAD}" if LOAD else ""),
    "config": f"{RANKS} ranks + 1 spare, stencil replay variant, {ITERATIONS} iterations, 1 worker thread per rank; "
              "hang timeout 0.4 s (rampart-run's watch of stopped processes; the heartbeat detector's period 0.1 s); "
              "one rank stopped (SIGSTOP) at a random iteration",
    "machine": f"{os.cpu_count()} cores (5 processes oversubscribed)" + (f", {LOAD} busy processes beside" if LOAD else ""),
    "repeat": REPEAT,
    "hang_killed_after_ms": {"watch": kill_times("hang_watch"), "detector": kill_times("hang_detector")},
    "hang_runs_identical": {mode: sum(r.get("result", {}).get("checksum") == reference and r["exit_code"] == 0
                                      for r in runs[mode]) for mode in ("hang_watch", "hang_detector")},
    # Healthy processes killed as hung, or declared dead, in runs without a fault.
    "false_alarms": {mode: sum(len(r["stopped_processes_killed"]) + len(r["ranks_dead"]) for r in runs[mode])
                     for mode in MODES if mode.endswith("no_fault")},
    "median_seconds": {k: med([r["seconds"] for r in v]) for k, v in runs.items()},
    "restarts_after_failed_start": {k: sum(r["restarts"] for r in v) for k, v in runs.items()},
    "runs": {k: [{"seconds": r["seconds"], "exit_code": r["exit_code"], "checksum": r.get("result", {}).get("checksum"),
                  "hang_at": r.get("hang_at"), "hangs_killed": r["hangs_killed"],
                  "stopped_processes_killed": r["stopped_processes_killed"], "ranks_dead": r["ranks_dead"],
                  "restarts": r["restarts"]} for r in v] for k, v in runs.items()},
}
name = "hangs_loaded.json" if LOAD else "hangs.json"
(root / "bench/results" / name).write_text(json.dumps(report, indent=1) + "\n")
print(json.dumps({k: report[k] for k in ("hang_killed_after_ms", "hang_runs_identical", "false_alarms",
                                          "median_seconds", "restarts_after_failed_start")}))
