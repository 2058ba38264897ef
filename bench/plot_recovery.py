#!/usr/bin/env python3
"""Plots bench/results/recovery.json: the phases of each recovery (detection,
agreement, re-sending) against the 100 ms figure, and the run times with and
without a crash. Writes bench/results/recovery.png."""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

root = Path(__file__).resolve().parent.parent
data = json.loads((root / "bench/results/recovery.json").read_text())
runs = data["runs"]["spare_kill"]
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
x = range(1, len(runs) + 1)
bottom = [0.0] * len(runs)
for key, label in (("detect_ms", "detection (kill to first survivor noticing)"),
                   ("agree_ms", "revoke, shrink, agree"),
                   ("resend_ms", "exchange of counts, re-sending")):
    vals = [r[key] for r in runs]
    a.bar(x, vals, bottom=bottom, label=label)
    bottom = [p + v for p, v in zip(bottom, vals)]
a.plot(x, [r["recover_ms"] for r in runs], "k.", label="kill to survivors computing again")
a.axhline(100, color="red", linestyle="--", label="target: 100 ms")
a.set_xlabel("run")
a.set_ylabel("ms")
a.set_title(f"recovery of 1 crash, 4 ranks + 1 spare (median {data['median_ms']['recover_ms']:.1f} ms)")
a.legend(fontsize=7)
names = ["no_spares", "spare_no_kill", "spare_kill"]
labels = ["no spare\n(no send log)", "1 spare,\nno crash", "1 spare,\nrank 2 killed"]
b.boxplot([[r["seconds"] for r in data["runs"][n]] for n in names], tick_labels=labels)
b.axhline(data["median_seconds"]["spare_no_kill"] + data["limit_seconds"], color="red", linestyle="--",
          label="fault-free + recomputation + 0.5 s")
b.set_ylabel("program time (s)")
b.set_title("whole run, stencil 128 x 2000, 1000 iterations")
b.legend(fontsize=7)
fig.tight_layout()
fig.savefig(root / "bench/results/recovery.png", dpi=110)
print("wrote bench/results/recovery.png")
