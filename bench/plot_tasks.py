#!/usr/bin/env python3
"""Plots bench/results/tasks.json (written by run_tasks.py) as
bench/results/tasks_overhead.png: extra time per task against the share of
failing tasks, replay and replicate in two panels as in the HPX paper's Fig. 2.
The dashed lines are the cost of re-execution alone, so the distance to them
is what the implementation adds."""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

results = Path(__file__).resolve().parent / "results"
report = json.loads((results / "tasks.json").read_text())
sweep = report["sweep"]
rates = sorted(sweep, key=float)
pct = [100 * float(r) for r in rates]
base = sweep["0"]["async"]["per_task_us"]
grain = sweep["0"]["async"]["grain_us"]

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
for v in ("async_replay", "async_replay_validate"):
    a.plot(pct, [sweep[r][v]["per_task_us"] - base for r in rates], marker="o", label=v)
# A failed attempt runs the grain again; attempts fail independently with rate e.
a.plot(pct, [grain * float(r) / (1 - float(r)) for r in rates], "k--", label="re-execution alone")
a.set_title(f"(a) replay, grain {grain:g} µs, 1 thread")
for v in ("async_replicate", "async_replicate_vote"):
    b.plot(pct, [sweep[r][v]["per_task_us"] - base for r in rates], marker="o", label=v)
b.plot(pct, [2 * grain for _ in rates], "k--", label="two extra copies on one thread")
b.set_title(f"(b) replicate(3), grain {grain:g} µs, 1 thread")
for ax in (a, b):
    ax.set_xlabel("tasks failing (%)")
    ax.set_ylabel("extra time per task over plain async (µs)")
    ax.grid(True, alpha=0.3)
    ax.legend()
b.set_ylim(0, 2.4 * grain)
fig.suptitle("rampart resilient async: overhead against error rate")
fig.tight_layout()
fig.savefig(results / "tasks_overhead.png", dpi=110)
print("wrote", results / "tasks_overhead.png")
