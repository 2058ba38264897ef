#!/usr/bin/env python3
"""Plots bench/results/pgas.json (from run_pgas.py) in the spirit of the
FT-ARMCI paper's figures. Writes to bench/results/:

- pgas_latency.png: 8-byte put, get, acc and read_inc (MPI: fetch_and_op)
  at 2 ranks: rampart with shadows, without, MPI on MPI_Win_allocate and on
  MPI_Win_create, the Global Arrays figures the issue quotes, and rampart
  across nodes (one rank a node: the message path) against 3 x the
  two-sided round trip; log y,
  each bar labelled, the error bars span the fastest and slowest job;
- pgas_bandwidth.png: put and get in GB/s against the size (1 KiB .. 4 MiB,
  log x): rampart with shadows, without, MPI on MPI_Win_allocate;
- pgas_fault.png: each iteration's latency (log y) of put and get at 4 ranks,
  rank 1 killed at iteration 200: the median over the living ranks, the
  slowest living rank, the rank whose ring target died, and the fault-free
  run's median;
- pgas_barrier.png: rampart's barrier against MPI_Barrier at 2, 4 and 8 ranks.

usage: bench/plot_pgas.py [--results bench/results]
"""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

root = Path(__file__).resolve().parent.parent
OPS = ["put", "get", "acc", "read_inc"]
SERIES = [("rampart_shadows", "rampart, with shadows", "tab:blue"),
          ("rampart_no_shadows", "rampart, without shadows", "tab:cyan"),
          ("mpi_allocate", "MPI, Win_allocate", "tab:green"),
          ("mpi_create", "MPI, Win_create", "tab:olive"),
          ("ga_reference", "Global Arrays (reference)", "tab:gray")]


def size_label(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f:
            return f"{b / f:g} {unit}"
    return f"{b} B"


def plain(v, _=None):
    return f"{v:g}"


def subtitle(data):
    m = data["machine"]
    return f"{m['nproc']} cores, {m['cpu_model']}, {data['date'][:10]}"


def latency(data, out):
    lat, spread = dict(data["latency_us"]), dict(data.get("latency_us_min_max_over_jobs", {}))
    series = list(SERIES)
    across = data.get("latency_across_nodes_us")
    if across:  # the message path: one rank a node
        lat["across_nodes"] = across["rampart_shadows"]
        spread["across_nodes"] = across["min_max_over_jobs"]["shadows"]
        series.append(("across_nodes", "rampart across nodes (message path), with shadows", "tab:purple"))
    fig, ax = plt.subplots(figsize=(11, 5.2))
    width = 0.8 / len(series)
    for i, (key, label, color) in enumerate(series):
        x = [j + (i - (len(series) - 1) / 2) * width for j in range(len(OPS))]
        y = [lat[key][op] for op in OPS]
        err = None
        if key in spread:
            err = [[lat[key][op] - spread[key][op][0] for op in OPS], [spread[key][op][1] - lat[key][op] for op in OPS]]
        bars = ax.bar(x, y, width, label=label, color=color, yerr=err, capsize=2,
                      hatch="//" if key == "ga_reference" else None, edgecolor="white" if key != "ga_reference" else "k")
        tops = [spread[key][op][1] if key in spread else lat[key][op] for op in OPS]
        for b, v, top in zip(bars, y, tops):
            ax.text(b.get_x() + b.get_width() / 2, max(v, top) * 1.12, f"{v:.3g}", ha="center", va="bottom", fontsize=7,
                    rotation=90)
    for j, (op, t) in enumerate((("put", 0.27), ("get", 0.2), ("acc", None), ("read_inc", 0.3))):
        if t is not None:
            ax.hlines(t, j - 0.4, j + 0.4, colors="red", linestyles=":", linewidth=1.2,
                      label="target (rampart, with shadows)" if j == 0 else None)
    if across:
        rt3 = 3 * across["two_sided_round_trip"]
        ax.hlines(rt3, -0.4, len(OPS) - 0.6, colors="tab:purple", linestyles="--", linewidth=1.0,
                  label=f"target across nodes: 3 x two-sided round trip ({rt3:.2f} µs)")
    ax.set_yscale("log")
    ax.set_ylim(0.01, 100)
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.set_xticks(range(len(OPS)))
    ax.set_xticklabels(["put", "get", "acc", "read_inc\n(MPI: fetch_and_op)"])
    ax.set_ylabel("latency (µs), log scale")
    ax.set_title(f"8-byte one-sided operations, rank 0 to rank 1, median of jobs ({subtitle(data)})", fontsize=10)
    ax.legend(fontsize=8, ncol=3, loc="upper left")
    ax.grid(axis="y", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "pgas_latency.png", dpi=110)
    plt.close(fig)


def bandwidth(data, out):
    bw = data["bandwidth_GBps"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), sharey=True)
    series = [s for s in SERIES if s[0] in ("rampart_shadows", "rampart_no_shadows", "mpi_allocate")]
    for ax, op in zip(axes, ("put", "get")):
        for key, label, color in series:
            sizes = sorted(int(b) for b in bw[key][op])
            ax.plot(sizes, [bw[key][op][str(b)] for b in sizes], marker="o", color=color, label=label,
                    linestyle="--" if key == "mpi_allocate" else "-")
        mib, floor = str(1 << 20), {"put": 0.45, "get": 0.9}[op]
        ax.plot([1 << 20], [floor * bw["mpi_allocate"][op][mib]], marker="_", markersize=18, mew=2, color="red",
                linestyle="none", label=f"target at 1 MiB, with shadows: ≥ {floor:g} × MPI")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(b) for b in sizes], fontsize=8)
        ax.set_xlabel("bytes per operation")
        ax.set_title(f"{op}, each followed by its completion", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("GB/s (10⁹ bytes per second)")
    fig.suptitle(f"Bandwidth at 2 ranks, rank 0 to rank 1's memory, median of jobs ({subtitle(data)})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out / "pgas_bandwidth.png", dpi=110)
    plt.close(fig)


def fault(data, out):
    f = data["fault"]
    k = f["kill_at"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, op in zip(axes, ("put", "get")):
        run, free = f[op]["kill"], f[op]["fault_free"]
        x = range(len(run["median_us"]))
        ax.plot(x, run["max_us"], color="tab:orange", linewidth=0.7, alpha=0.6, label="with kill: slowest living rank")
        ax.plot(x, free["median_us"], color="tab:gray", linewidth=0.9, label="fault-free: median over ranks")
        ax.plot(x, run["median_us"], color="tab:blue", linewidth=0.9, label="with kill: median over living ranks")
        ax.plot(x, run["toucher_us"], color="tab:red", linewidth=0.9, linestyle="--",
                label=f"with kill: rank {(f['kill_rank'] + f['ranks'] - 1) % f['ranks']} (its target died)")
        ax.axvline(k, color="k", linestyle=":", linewidth=1.2)
        ax.text(k + 4, 0.98, f"rank {f['kill_rank']} killed", transform=ax.get_xaxis_transform(), fontsize=8,
                va="top")
        s = f[op]["summary"]
        ax.set_title(f"{op}: fault-free median {s['fault_free_median_us']:.3f} µs, first {f['first_after_kill_iterations']} "
                     f"after the kill ≤ {s['first_after_kill_worst_us']:.2f} µs", fontsize=9)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(plain))
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3, which="major")
    axes[0].set_ylabel("latency of one call and fence (µs), log scale")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    fig.suptitle(f"{f['bytes']}-byte {'/'.join(('put', 'get'))} to the next rank's block, {f['ranks']} ranks, "
                 f"{f['gap_us']} µs between iterations; detection took {data['detection']['4']['median_ms']:.0f} ms "
                 f"(median) at 4 ranks ({subtitle(data)})", fontsize=9)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out / "pgas_fault.png", dpi=110)
    plt.close(fig)


def barrier(data, out):
    b = data["barrier"]
    ranks = sorted(b, key=int)
    fig, ax = plt.subplots(figsize=(7, 4.3))
    width = 0.36
    for i, (key, label, color) in enumerate((("rampart_us", "rampart::pgas::barrier()", "tab:blue"),
                                             ("mpi_us", "MPI_Barrier", "tab:green"))):
        x = [j + (i - 0.5) * width for j in range(len(ranks))]
        y = [b[n][key] for n in ranks]
        jobs = "rampart_jobs_us" if key == "rampart_us" else "mpi_jobs_us"
        err = [[v - min(b[n][jobs]) for v, n in zip(y, ranks)], [max(b[n][jobs]) - v for v, n in zip(y, ranks)]]
        bars = ax.bar(x, y, width, yerr=err, capsize=3, color=color, label=label)
        for bar, v, n in zip(bars, y, ranks):
            ax.text(bar.get_x() + bar.get_width() / 2, max(b[n][jobs]) * 1.1, f"{v:.3g}", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    lo = min(min(b[n]["rampart_jobs_us"] + b[n]["mpi_jobs_us"]) for n in ranks)
    hi = max(max(b[n]["rampart_jobs_us"] + b[n]["mpi_jobs_us"]) for n in ranks)
    ax.set_ylim(lo / 2, hi * 8)
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.set_xticks(range(len(ranks)))
    ax.set_xticklabels([f"{n} ranks\nratio {b[n]['ratio']:.2f}" + (" (target ≤ 2)" if n != "2" else "")
                        for n in ranks])
    ax.set_ylabel("time per barrier (µs), log scale")
    ax.set_title(f"Barrier, median of jobs; error bars: fastest and slowest job\n({subtitle(data)}, "
                 f"ranks oversubscribed)", fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "pgas_barrier.png", dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", default=str(root / "bench" / "results"))
    a = p.parse_args()
    results = Path(a.results)
    data = json.loads((results / "pgas.json").read_text())
    for plot in (latency, bandwidth, fault, barrier):
        plot(data, results)
        print(f"wrote {results / ('pgas_' + plot.__name__ + '.png')}")


if __name__ == "__main__":
    main()
