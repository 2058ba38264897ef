#!/usr/bin/env python3
"""Irrecoverable data loss of the replicated store, like Fig. 3 of the
restore paper: (a) the fraction of PEs that fail until some block has no copy
left, simulated on the real placement (mean, 10th-90th percentile) and from
the IV-D model; (b) the simulation's mean against the model's.

Reads bench/results/idl.json and writes bench/results/idl.png. With --run,
first runs rampart-idl-sim from the build directory and rewrites idl.json:
r = 2 and 4 on p = 64, 128, ..., 16384, and r = 3 on p = 96, 192, ..., 12288
(r must divide p), each with permutation ranges of 64 blocks and without;
and whole nodes of 8 PEs failing (r = 2 and 4 on p = 64 .. 16384, ranges of 64
blocks) into bench/results/idl_nodes.json, a table (README there).

usage: bench/plot_idl.py [--run BUILD_DIR] [--trials N]
"""
import argparse
import json
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

root = Path(__file__).resolve().parent.parent
results = root / "bench/results/idl.json"
node_results = root / "bench/results/idl_nodes.json"
PES_PER_NODE = 8
POWERS = [64 << i for i in range(9)]  # 64 .. 16384
THIRDS = [96 << i for i in range(8)]  # 96 .. 12288
PLOTTED_RANGE_BLOCKS = 64


def run(build, trials):
    tool = Path(build) / "tools/rampart-idl-sim"
    rows, commands = [], []
    for range_blocks in (PLOTTED_RANGE_BLOCKS, 0):
        for pes, replicas in ((POWERS, "2,4"), (THIRDS, "3")):
            cmd = [str(tool), "--pes", ",".join(map(str, pes)), "--replicas", replicas, "--trials", str(trials),
                   "--range-blocks", str(range_blocks), "--seed", "1", "--json"]
            commands.append(" ".join(["rampart-idl-sim"] + cmd[1:]))
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rows += [json.loads(line) for line in out.splitlines() if line.strip()]
    worst = max(abs(r["relative_difference"]) for r in rows)
    data = {"command": f"bench/plot_idl.py --run {build} --trials {trials}", "tool_commands": commands,
            "max_abs_relative_difference": worst, "rows": rows}
    results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {results.relative_to(root)}: {len(rows)} rows, largest |relative difference| {100 * worst:.2f}%")


def run_nodes(build, trials):
    """Nodes of PES_PER_NODE consecutive PEs fail whole, as rampart-run places ranks."""
    cmd = [str(Path(build) / "tools/rampart-idl-sim"), "--pes", ",".join(map(str, POWERS)), "--replicas", "2,4",
           "--pes-per-node", str(PES_PER_NODE), "--trials", str(trials), "--range-blocks",
           str(PLOTTED_RANGE_BLOCKS), "--seed", "1", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    worst = max(abs(r["relative_difference"]) for r in rows)
    data = {"command": f"bench/plot_idl.py --run {build} --trials {trials}",
            "tool_command": " ".join(["rampart-idl-sim"] + cmd[1:]), "max_abs_relative_difference": worst,
            "rows": rows}
    node_results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {node_results.relative_to(root)}: {len(rows)} rows, largest |relative difference| "
          f"{100 * worst:.2f}%")


def plot():
    data = json.loads(results.read_text())
    rows = [r for r in data["rows"] if r["range_blocks"] == PLOTTED_RANGE_BLOCKS]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for r, color in ((2, "tab:blue"), (3, "tab:orange"), (4, "tab:green")):
        mine = sorted((x for x in rows if x["replicas"] == r), key=lambda x: x["pes"])
        if not mine:
            continue
        p = [x["pes"] for x in mine]
        frac = [x["mean_fraction_failed"] for x in mine]
        low = [f - x["p10"] / x["pes"] for f, x in zip(frac, mine)]
        high = [x["p90"] / x["pes"] - f for f, x in zip(frac, mine)]
        a.errorbar(p, frac, yerr=[low, high], fmt="o", color=color, capsize=3, ms=4,
                   label=f"r = {r}: simulated (mean, 10th-90th pct.)")
        a.plot(p, [x["model_mean_fraction_failed"] for x in mine], "-", color=color, label=f"r = {r}: model")
        b.errorbar(p, [100 * x["relative_difference"] for x in mine],
                   yerr=[200 * x["standard_error"] / x["model_mean_failures_until_loss"] for x in mine],
                   fmt="o-", color=color, capsize=3, ms=4, label=f"r = {r}")
    trials = rows[0]["trials"]
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xlabel("PEs p")
    a.set_ylabel("fraction of PEs failed until first data loss")
    a.set_title(f"(a) failures until irrecoverable data loss ({trials} trials)")
    a.legend(fontsize=7)
    b.axhspan(-5, 5, color="0.9", label="target: within 5%")
    b.axhline(0, color="k", lw=0.8)
    b.set_xscale("log", base=2)
    b.set_xlabel("PEs p")
    b.set_ylabel("(simulated - model) / model mean, %")
    b.set_ylim(-6, 6)
    b.set_title("(b) simulation against the model (bars: 2 standard errors)")
    b.legend(fontsize=7)
    fig.tight_layout()
    out = root / "bench/results/idl.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out.relative_to(root)}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", metavar="BUILD_DIR", help="run rampart-idl-sim from BUILD_DIR and rewrite idl.json first")
    ap.add_argument("--trials", type=int, default=20000, help="trials per (p, r) with --run (default 20000)")
    args = ap.parse_args()
    if args.run:
        run(args.run, args.trials)
        run_nodes(args.run, args.trials)
    plot()
