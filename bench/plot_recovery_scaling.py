#!/usr/bin/env python3
"""Plots a result of bench/run_recovery_scaling.py (by default
bench/results/recovery_scaling.json): the median time of each phase of a
recovery against the ranks, the model (the sum of the fits of the phases
in series, over the ranks that had a core per process when there are
enough of them) against the measured totals, and ULFM's agree and shrink
without a failure. Writes the PNG beside the JSON, under the same name.

usage: bench/plot_recovery_scaling.py [result.json]"""
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

root = Path(__file__).resolve().parent.parent
source = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "bench/results/recovery_scaling.json"
data = json.loads(source.read_text())
med = data["median_ms"]
ranks = [int(p) for p in med["total"]]
fit = data["fit_own_core"] or data["fit_all"]
cores = int(data["machine"].split()[0])
forms = {"constant": lambda p: 0.0, "log2 P": math.log2, "P": float, "P log2 P": lambda p: p * math.log2(p)}


def curve(form):
    """a + b*f(P) from the form's text, '3.2' or '1.6 + 1.04 * log2 P'."""
    if " * " not in form:
        return lambda p: float(form)
    a, rest = form.split(" + ", 1)
    b, name = rest.split(" * ", 1)
    return lambda p: float(a) + float(b) * forms[name](p)


fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
for k in ("detection", "agreement", "take-over", "exchange of counts", "re-sending"):
    a.plot(ranks, [med[k][str(p)] for p in ranks], "o-", label=k)
a.plot(ranks, [med["total"][str(p)] for p in ranks], "ks", label="kill to computing again")
xs = [2 ** (i / 4) for i in range(4, 4 * 17 + 1)]
phases = [curve(fit["phases"][k]["algorithm"]["form"]) for k in fit["sum_of_phases"]["phases"]]
a.plot(xs, [sum(f(x) for f in phases) for x in xs], "k--", label="model: sum of the fits of the phases in series")
a.axvline(cores - 0.5, color="grey", linestyle=":", label="beyond: more processes than cores")
a.set_xscale("log", base=2)
a.set_yscale("log")
a.set_xlabel("ranks P (plus 1 spare)")
a.set_ylabel("median ms")
a.set_title(f"recovery phases; model at 100,000 ranks: {fit['sum_of_phases']['projected_ms']['100000']} ms")
a.legend(fontsize=7)
prims = data["ulfm_primitives_us"]
procs = [int(k.split()[0]) for k in prims]
for k, label in (("agree_us", "MPIX_Comm_agree"), ("shrink_us", "MPIX_Comm_shrink"), ("barrier_us", "MPI_Barrier")):
    b.plot(procs, [prims[p][k] for p in prims], "o-", label=label)
b.axvline(cores + 0.5, color="grey", linestyle=":", label="more processes than cores")
b.set_xscale("log", base=2)
b.set_yscale("log")
b.set_xlabel("processes")
b.set_ylabel("median µs (slowest rank)")
b.set_title("ULFM's collectives without a failure")
b.legend(fontsize=7)
fig.tight_layout()
fig.savefig(source.with_suffix(".png"), dpi=110)
