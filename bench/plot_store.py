#!/usr/bin/env python3
"""Plots bench/results/store_ranges.json (from run_store.py): the median time
of submit, load_one_pe and load_all against the bytes per permutation range,
one line per number of ranks, as in Fig. 4a of the restore paper. The runs
without permutation are drawn as dashed horizontal lines, the target figures
as red dotted ones, and the error bars span the fastest and slowest
repetition. Writes bench/results/store_ranges.png.

usage: bench/plot_store.py [--results bench/results]
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

root = Path(__file__).resolve().parent.parent
OPS = [("submit", "submit", 300.0), ("load_one_pe", "load one PE's data (rank 0's, spread over the others)", 5.0),
       ("load_all", "load all data (no rank gets its own)", 45.0)]


def size_label(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f:
            return f"{b / f:g} {unit}"
    return f"{b} B"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", default=str(root / "bench" / "results"))
    a = p.parse_args()
    results = Path(a.results)
    data = json.loads((results / "store_ranges.json").read_text())
    rows = data["rows"]
    ranks = sorted({r["ranks"] for r in rows})
    first = rows[0]
    fig, axes = plt.subplots(1, len(OPS), figsize=(5 * len(OPS), 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (op, title, limit) in zip(axes, OPS):
        for i, n in enumerate(ranks):
            pts = sorted((r for r in rows if r["op"] == op and r["ranks"] == n and r["permutation_range_bytes"] > 0),
                         key=lambda r: r["permutation_range_bytes"])
            c = colors[i % len(colors)]
            if pts:
                x = [r["permutation_range_bytes"] for r in pts]
                y = [r["median_ms"] for r in pts]
                err = [[r["median_ms"] - r["min_ms"] for r in pts], [r["max_ms"] - r["median_ms"] for r in pts]]
                ax.errorbar(x, y, yerr=err, marker="o", color=c, capsize=3, label=f"{n} ranks")
            for r in rows:
                if r["op"] == op and r["ranks"] == n and r["permutation_range_bytes"] == 0:
                    ax.axhline(r["median_ms"], color=c, linestyle="--", linewidth=1,
                               label=f"{n} ranks, no permutation")
        ax.axhline(limit, color="red", linestyle=":", label=f"target: {limit:g} ms")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
        ticks = sorted({r["permutation_range_bytes"] for r in rows if r["permutation_range_bytes"] > 0})
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(t) for t in ticks], rotation=45, fontsize=7)
        ax.set_xlabel("bytes per permutation range")
        ax.set_ylabel("median time (ms)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"rampart::store, {size_label(first['bytes_per_pe'])} per PE, {first['block_bytes']}-byte blocks, "
                 f"r = {first['replicas']}, median of {first['repeat']} ({data['machine']})", fontsize=10)
    fig.tight_layout()
    out = results / "store_ranges.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
