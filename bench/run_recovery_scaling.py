#!/usr/bin/env python3
"""How the time of a crash recovery grows with the ranks, and where it goes
at scale. The distributed rampart-stencil1d on P ranks + 1 spare (P = 2, 4,
8, 16, 32), 8 subdomains of 500 points per rank, 200 iterations of 16 steps,
1 worker thread per rank; rank 1 killed with SIGKILL at iteration 100.
All processes share this machine's cores (oversubscribed beyond them).

Each recovery is split as rampart-run reports it: detection (kill to the
first survivor that noticed), agreement (revoke, shrink, agree), take-over
(the spare starting the program), exchange of counts (the all-to-all of the
message counts of every channel), re-sending (the rest of the recovery).
Per phase the median over `repeat` runs is fitted with a + b*f(P), f one of
1, log2 P, P, P log2 P (least squares; the form with the smallest largest
relative error), projected to 1,000 and 100,000 ranks. Writes
bench/results/recovery_scaling.json.

usage: bench/run_recovery_scaling.py [build-dir] [repeat=5]
"""
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 5
root = Path(__file__).resolve().parent.parent
RANKS = (2, 4, 8, 16, 32)
PROJECT = (1000, 100000)
FORMS = {"constant": lambda p: 0.0, "log2 P": math.log2, "P": float, "P log2 P": lambda p: p * math.log2(p)}


def reference(p):
    """The checksum of the fault-free run at P ranks."""
    app = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(8 * p), "--points", "500", "--iterations",
           "200", "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]
    out = subprocess.run([str(root / "tools" / "rampart-run"), "-n", str(p), "--threads", "1", "--json", "--"] + app,
                         check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])["result"]["checksum"]


def run(p):
    app = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(8 * p), "--points", "500", "--iterations",
           "200", "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]
    cmd = [str(root / "tools" / "rampart-run"), "-n", str(p), "--spares", "1", "--threads", "1", "--kill",
           "1@iter100", "--json", "--"] + app
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"detection": r["detect_ms"], "agreement": r["agree_ms"], "take-over": r["takeover_ms"],
            "exchange of counts": r["exchange_ms"], "re-sending": r["resend_ms"] - r["exchange_ms"],
            "total": r["recover_ms"], "checksum": r["result"]["checksum"]}


def fit(points):
    """(form, a, b, largest relative error) of the best a + b*f(P)."""
    best = None
    for name, f in FORMS.items():
        xs, ys = [f(p) for p, _ in points], [y for _, y in points]
        if name == "constant":
            a, b = statistics.mean(ys), 0.0
        else:
            mx, my = statistics.mean(xs), statistics.mean(ys)
            var = sum((x - mx) ** 2 for x in xs)
            b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var
            a = my - b * mx
            if b < 0:
                continue  # a phase that shrinks with P: the constant form says it better
        worst = max(abs(a + b * f(p) - y) / max(y, 1e-9) for p, y in points)
        if best is None or worst < best[3]:
            best = (name, a, b, worst)
    return best


def main():
    references = {p: reference(p) for p in RANKS}
    runs = {p: [] for p in RANKS}
    for i in range(REPEAT):
        for p in RANKS:
            runs[p].append(run(p))
            x = runs[p][-1]
            print(f"run {i + 1}, {p} ranks: " + ", ".join(f"{k} {x[k]:.1f}" for k in x if k != "checksum"),
                  flush=True)
    phases = ("detection", "agreement", "take-over", "exchange of counts", "re-sending", "total")
    medians = {k: {p: statistics.median([x[k] for x in runs[p]]) for p in RANKS} for k in phases}
    models = {}
    for k in phases:
        name, a, b, worst = fit(list(medians[k].items()))
        f = FORMS[name]
        models[k] = {"form": f"{a:.3g} + {b:.3g} * {name}" if name != "constant" else f"{a:.3g}",
                     "largest_relative_error": round(worst, 3),
                     "projected_ms": {str(n): round(a + b * f(n), 1) for n in PROJECT}}
    summed = {str(n): round(sum(models[k]["projected_ms"][str(n)] for k in phases[:-1]), 1) for n in PROJECT}
    first = max(phases[:-1], key=lambda k: models[k]["projected_ms"][str(PROJECT[-1])])
    report = {
        "command": f"bench/run_recovery_scaling.py {build} {REPEAT}",
        "config": "stencil1d, P ranks + 1 spare, 8 subdomains x 500 points per rank, 200 iterations x 16 steps, 1 "
                  "worker thread per rank; rank 1 killed (SIGKILL) at iteration 100",
        "machine": f"{os.cpu_count()} cores shared by all P + 1 processes (oversubscribed from {os.cpu_count() + 1} on)",
        "repeat": REPEAT,
        "median_ms": {k: {str(p): v for p, v in medians[k].items()} for k in phases},
        "models": models,
        "projected_sum_of_phases_ms": summed,
        "largest_at_scale": first,
        "identical_to_fault_free": {str(p): sum(x["checksum"] == references[p] for x in runs[p]) for p in RANKS},
    }
    (root / "bench/results/recovery_scaling.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("median_ms", "models", "projected_sum_of_phases_ms", "largest_at_scale")},
                     indent=1))


if __name__ == "__main__":
    main()
