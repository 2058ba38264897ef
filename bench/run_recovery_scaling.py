#!/usr/bin/env python3
"""How the time of a crash recovery grows with the ranks, and where it goes
at scale. The distributed rampart-stencil1d on P ranks + 1 spare (by
default P = 2, 4, 8, 16, 32), 8 subdomains of 500 points per rank, 4000
iterations of 16 steps, 1 worker thread per rank; rank 1 killed with
SIGKILL at iteration 2000, some 100 ms after the start: Open MPI reports a
death within about 45 ms of the end of MPI_Init only when that time is
over, which would be measured as detection. All processes share this
machine's cores (oversubscribed once P + 1 exceeds them, and the report
says from where).

Each recovery is split as rampart-run reports it: detection (kill to the
first survivor that noticed), agreement (revoke, shrink, agree), take-over
(the spare starting the program), exchange of counts (among the processes
that share a channel), re-sending (the rest of the recovery).
Per phase the median over `repeat` runs is fitted (least squares) with
a + b*f(P), f the growth of the phase's algorithm (MODEL below), and the
sum of the fits of the phases in series (IN_SERIES: all but the take-over,
which spans the exchange of counts and the re-sending) is the model of the
whole recovery, projected to 1,000 and 100,000 ranks. As a check of those
forms, each phase is also fitted with every f of 1, log2 P, P, P log2 P,
and the one with the smallest largest relative error is reported with its
projection. The fits
are made twice: over every P, and over the P whose processes each had a
core of their own (when there are at least 3 such P): a phase of a
time-shared process waits for the scheduler, which no algorithm changes.

ULFM's agree and shrink without a failure (rampart-bench-ulfm-primitives)
are timed too, on the same P + 1 processes, with thousands of samples:
they are the collective steps of the agreement phase and of the close of
the exchange of counts, and show their growth without the noise of a kill.
Writes bench/results/recovery_scaling.json (or --out).

usage: bench/run_recovery_scaling.py [build-dir] [repeat=5] [--ranks 2,4,8,16,32] [--out FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "tools"))
import rampart_launch  # noqa: E402  (the launcher's own choice of mpiexec and environment)
PROJECT = (1000, 100000)
FORMS = {"constant": lambda p: 0.0, "log2 P": math.log2, "P": float, "P log2 P": lambda p: p * math.log2(p)}
PHASES = ("detection", "agreement", "take-over", "exchange of counts", "re-sending", "total")
# The growth of each phase's algorithm.
MODEL = {
    "detection": "log2 P",  # a detector's time-out, then ULFM's notice spreads as a reliable broadcast
    "agreement": "log2 P",  # revoke (reliable broadcast), shrink and agree (ULFM's agreement tree)
    "take-over": "constant",  # one process's work: the spare starts the program
    "exchange of counts": "log2 P",  # with a rank's channel peers only, closed by one agreement over all
    "re-sending": "constant",  # each rank's log to its peers
}
# The phases one after the other from the kill until the survivors compute
# again: their sum is the whole recovery. The take-over is not among them: the
# spare starts its program once the recovery has ended, so the take-over spans
# the exchange of counts and the re-sending, which adding it would count twice.
IN_SERIES = ("detection", "agreement", "exchange of counts", "re-sending")


def stencil(build, p):
    return [str(build / "apps/rampart-stencil1d"), "--subdomains", str(8 * p), "--points", "500", "--iterations",
            "4000", "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]


def reference(build, p):
    """The checksum of the fault-free run at P ranks."""
    out = subprocess.run([str(root / "tools" / "rampart-run"), "-n", str(p), "--threads", "1", "--json", "--"]
                         + stencil(build, p), check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])["result"]["checksum"]


def run(build, p):
    cmd = [str(root / "tools" / "rampart-run"), "-n", str(p), "--spares", "1", "--threads", "1", "--kill",
           "1@iter2000", "--json", "--"] + stencil(build, p)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"detection": r["detect_ms"], "agreement": r["agree_ms"], "noticing": r["recoveries"][0].get("notice_ms"),
            "take-over": r["takeover_ms"],
            "exchange of counts": r["exchange_ms"], "re-sending": round(r["resend_ms"] - r["exchange_ms"], 2),
            "total": r["recover_ms"], "checksum": r["result"]["checksum"]}


def fit(points, forms=FORMS):
    """(form, a, b, largest relative error) of the best a + b*f(P), f one of forms."""
    best = None
    for name, f in forms.items():
        xs, ys = [f(p) for p, _ in points], [y for _, y in points]
        if name == "constant":
            a, b = statistics.mean(ys), 0.0
        else:
            mx, my = statistics.mean(xs), statistics.mean(ys)
            var = sum((x - mx) ** 2 for x in xs)
            b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0
            a = my - b * mx
            # A phase that shrinks with P (or a single P): the constant form says it better.
            if b <= 0:
                a, b, name = my, 0.0, "constant"
        worst = max(abs(a + b * f(p) - y) / max(y, 1e-9) for p, y in points)
        if best is None or worst < best[3]:
            best = (name, a, b, worst)
    return best


def model(name, a, b, worst, unit="ms"):
    f = FORMS[name]
    return {"form": f"{a:.3g} + {b:.3g} * {name}" if name != "constant" else f"{a:.3g}",
            "largest_relative_error": round(worst, 3),
            f"projected_{unit}": {str(n): round(a + b * f(n), 2) for n in PROJECT}}


def primitive_models(prims, ranks):
    """Per ULFM primitive: the logarithmic fit (its algorithm's) and the best form."""
    out = {}
    for k in ("agree_us", "shrink_us"):
        points = [(p + 1, prims[p][k]) for p in ranks]  # P + 1 processes took part
        out[k] = {"log2": model(*fit(points, {"log2 P": math.log2}), unit="us"),
                  "best_form": model(*fit(points), unit="us")}
    return out


def models_of(medians, ranks):
    """Per phase: the fit of its algorithm's form and the best form, over
    these ranks, with projections; the sum of those IN_SERIES models the
    whole recovery. A phase whose fit of its algorithm's form has a negative
    slope is fitted as a constant (its "algorithm" entry says which form was
    used)."""
    phases, fitted, best = {}, {}, {}
    for k in PHASES[:-1]:
        points = [(p, medians[k][p]) for p in ranks]
        name, a, b, worst = fit(points, {MODEL[k]: FORMS[MODEL[k]]})
        fitted[k] = lambda p, a=a, b=b, f=FORMS[name]: a + b * f(p)
        name_b, a_b, b_b, worst_b = fit(points)
        best[k] = lambda p, a=a_b, b=b_b, f=FORMS[name_b]: a + b * f(p)
        phases[k] = {"algorithm_form": MODEL[k], "algorithm": model(name, a, b, worst),
                     "best_form": model(name_b, a_b, b_b, worst_b)}
    whole = {p: sum(fitted[k](p) for k in IN_SERIES) for p in ranks + list(PROJECT)}
    return {
        "ranks": list(ranks), "phases": phases,
        "sum_of_phases": {
            "phases": list(IN_SERIES),
            # In-sample: over the very ranks the phases were fitted on.
            "largest_relative_error_of_measured_total": round(
                max(abs(whole[p] - medians["total"][p]) / medians["total"][p] for p in ranks), 3),
            "projected_ms": {str(n): round(whole[n], 1) for n in PROJECT},
            "projected_with_best_forms_ms": {str(n): round(sum(best[k](n) for k in IN_SERIES), 1) for n in PROJECT}},
        "largest_at_scale": {"algorithm_forms": max(fitted, key=lambda k: fitted[k](PROJECT[-1])),
                             "best_forms": max(best, key=lambda k: best[k](PROJECT[-1]))},
    }


def primitives(build, p, samples):
    """ULFM's agree, iagree and shrink, without a failure, on P + 1 processes."""
    cmd = [rampart_launch.find_mpiexec(None), "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp",
           "--mca", "coll", "^han", "-n", str(p + 1), str(build / "bench/rampart-bench-ulfm-primitives"),
           "--samples", str(samples)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600,
                         env=rampart_launch.base_environment()).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {k: r[k]["median"] for k in ("agree_us", "iagree_us", "shrink_us", "barrier_us")}


def analysed(runs, prims, cores):
    """The medians, the fits and the primitives' fits of a set of runs."""
    ranks = sorted(runs)
    medians = {k: {p: statistics.median([x[k] for x in runs[p]]) for p in ranks} for k in PHASES}
    # Within the agreement: from the first process that noticed the failure
    # to the last (recorded since this column exists; not a phase of the sum).
    noticing = {p: statistics.median([x["noticing"] for x in runs[p]]) for p in ranks
                if all(x.get("noticing") is not None for x in runs[p])}
    own_core = [p for p in ranks if p + 1 <= cores]
    return {
        "median_ms": {k: {str(p): v for p, v in medians[k].items()} for k in PHASES},
        "median_noticing_ms": {str(p): v for p, v in noticing.items()} or None,
        "fit_all": models_of(medians, ranks),
        "fit_own_core": models_of(medians, own_core) if len(own_core) >= 3 else None,
        "ulfm_primitives_us": {str(p + 1) + " processes": prims[p] for p in ranks},
        "ulfm_primitives_fit": primitive_models(prims, own_core if len(own_core) >= 3 else ranks),
        "runs_ms": {str(p): runs[p] for p in ranks},
    }


def measured(a):
    """Runs the benchmark: the report's measured part and the runs."""
    build, ranks = Path(a.build), [int(x) for x in a.ranks.split(",")]
    references = {p: reference(build, p) for p in ranks}
    runs = {p: [] for p in ranks}
    for i in range(a.repeat):
        for p in ranks:
            runs[p].append(run(build, p))
            x = runs[p][-1]
            print(f"run {i + 1}, {p} ranks: " + ", ".join(f"{k} {x[k]:.1f}" for k in PHASES), flush=True)
    prims = {p: primitives(build, p, a.samples) for p in ranks}
    head = {
        "command": "bench/run_recovery_scaling.py " + " ".join(
            [a.build, str(a.repeat)] + ([f"--ranks {a.ranks}"] if a.ranks != "2,4,8,16,32" else [])),
        "config": "stencil1d, P ranks + 1 spare, 8 subdomains x 500 points per rank, 4000 iterations x 16 steps, 1 "
                  "worker thread per rank; rank 1 killed (SIGKILL) at iteration 2000",
        "machine": f"{os.cpu_count()} cores shared by all P + 1 processes (oversubscribed from P = {os.cpu_count()} on)",
        "repeat": a.repeat,
        "identical_to_fault_free": {str(p): sum(x.pop("checksum") == references[p] for x in runs[p]) for p in ranks},
    }
    return head, runs, prims


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("repeat", nargs="?", type=int, default=5)
    ap.add_argument("--ranks", default="2,4,8,16,32", help="the P to measure, comma-separated")
    ap.add_argument("--samples", type=int, default=2000, help="samples of each ULFM primitive")
    ap.add_argument("--out", default=str(root / "bench/results/recovery_scaling.json"))
    ap.add_argument("--refit", action="store_true",
                    help="measure nothing: fit again the runs recorded in --out (after a change of the analysis)")
    a = ap.parse_args()
    if a.refit:
        old = json.loads(Path(a.out).read_text())
        head = {k: old[k] for k in ("command", "config", "machine", "repeat", "identical_to_fault_free")}
        runs = {int(p): v for p, v in old["runs_ms"].items()}
        prims = {int(k.split()[0]) - 1: v for k, v in old["ulfm_primitives_us"].items()}
        cores = int(old["machine"].split()[0])
    else:
        head, runs, prims = measured(a)
        cores = os.cpu_count()
    report = {**head, **analysed(runs, prims, cores)}
    Path(a.out).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("median_ms", "fit_all", "fit_own_core", "ulfm_primitives_fit")},
                     indent=1))


if __name__ == "__main__":
    main()
