#!/usr/bin/env python3
"""Plots bench/results/replica.json: ping-pong latency and bandwidth against
message size, the same program natively twice at once (each job told it
has one slot, so that MPI yields the core when idle) against replicated
(R = 2), with the replicated/native ratio on a second axis (like Fig. 7 of
the SDR-MPI paper); dashed, the runs whose jobs started their sweeps at one
instant. Writes bench/results/replica_pingpong.png.
"""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

results = Path(__file__).resolve().parent / "results"
data = json.loads((results / "replica.json").read_text())
rows = data["pingpong"]
sizes = [r["bytes"] for r in rows]

fig, (lat, bw) = plt.subplots(1, 2, figsize=(12, 4.5))
lat.plot(sizes, [r["native_twice_yielding_latency_us"] for r in rows], "o-", label="native, twice at once (yielding)")
lat.plot(sizes, [r["replicated_latency_us"] for r in rows], "s-", label="replicated, R = 2")
lat.set(xscale="log", yscale="log", xlabel="message size (bytes)", ylabel="latency (µs, half a round trip)",
        title="ping-pong latency")
bw.plot(sizes, [r["native_twice_yielding_bandwidth_mb_s"] for r in rows], "o-", label="native, twice at once (yielding)")
bw.plot(sizes, [r["replicated_bandwidth_mb_s"] for r in rows], "s-", label="replicated, R = 2")
bw.set(xscale="log", xlabel="message size (bytes)", ylabel="bandwidth (MB/s)", title="ping-pong bandwidth")
together = data.get("pingpong_together")
if together:
    ts = [r["bytes"] for r in together]
    for ax, unit in ((lat, "latency_us"), (bw, "bandwidth_mb_s")):
        ax.plot(ts, [r["native_twice_yielding_" + unit] for r in together], "o--", label="native twice, sweeps started together")
        ax.plot(ts, [r["replicated_" + unit] for r in together], "s--", label="replicated, same start")
for ax, key in ((lat, "latency_ratio"), (bw, "bandwidth_ratio")):
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    ratio = ax.twinx()
    ratio.plot(sizes, [r[key] for r in rows], ":", color="gray")
    ratio.set_ylabel("replicated / native (dotted)")
fig.tight_layout()
fig.savefig(results / "replica_pingpong.png", dpi=120)
print("wrote", results / "replica_pingpong.png")
