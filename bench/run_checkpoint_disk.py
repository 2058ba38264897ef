#!/usr/bin/env python3
"""What writing checkpoints to disk costs the distributed rampart-stencil1d:
4 ranks, 32 subdomains of 20000 points per rank (5 MiB of state a rank),
400 iterations of 16 steps, 1 worker thread per rank, a checkpoint every 50
iterations (7 in the run). Interleaved, `repeat` times each:
- checkpoints in memory only (the store);
- the same, every one also written to a folder (--checkpoint-dir, every 1);
and `dd` of 64 MiB to the same folder, synced. Records the program's time
(its time loop on rank 0), the cost of a disk checkpoint against the time
between two checkpoints, and the pace at which a checkpoint reaches the
disk (every rank's file written and synced, from the first start to the
last end, in the background) against dd's. Writes
bench/results/checkpoint_disk.json.

usage: bench/run_checkpoint_disk.py [build-dir] [repeat=7] [folder=build/checkpoint-bench]
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 7
folder = Path(sys.argv[3] if len(sys.argv) > 3 else build / "checkpoint-bench").resolve()
root = Path(__file__).resolve().parent.parent
RANKS, ITERATIONS, EVERY = 4, 400, 50
SAVES = (ITERATIONS - 1) // EVERY  # the last iteration saves nothing
app = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * RANKS), "--points", "20000",
       "--iterations", str(ITERATIONS), "--steps", "16", "--threads", "1", "--variant", "dataflow",
       "--checkpoint-every", str(EVERY), "--json"]


def run(disk):
    cmd = [str(root / "tools" / "rampart-run"), "-n", str(RANKS), "--threads", "1", "--json"]
    if disk:
        shutil.rmtree(folder, ignore_errors=True)
        cmd += ["--checkpoint-dir", str(folder)]
    out = subprocess.run(cmd + ["--"] + app, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def dd_bytes_per_second():
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "dd.bin"
    done = subprocess.run(["dd", "if=/dev/zero", f"of={target}", "bs=1M", "count=64", "conv=fsync"],
                          capture_output=True, text=True, check=True)
    target.unlink()
    m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", done.stderr)
    return int(m.group(1)) / float(m.group(2))


def main():
    memory, disk, dd = [], [], []
    for i in range(REPEAT):
        memory.append(run(False))
        disk.append(run(True))
        dd.append(dd_bytes_per_second())
        d = disk[-1]["checkpoints_on_disk"]
        print(f"run {i + 1}: memory {memory[-1]['result']['seconds']:.3f} s, disk {disk[-1]['result']['seconds']:.3f} s "
              f"({d['written']} files, {d['bytes'] / 2**20:.0f} MiB, {d['waited']} saves waited), dd {dd[-1] / 2**20:.0f} MiB/s",
              flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    med = statistics.median
    t_memory = med([r["result"]["seconds"] for r in memory])
    t_disk = med([r["result"]["seconds"] for r in disk])
    interval = t_memory / (ITERATIONS / EVERY)
    per_checkpoint = (t_disk - t_memory) / SAVES
    # Per run, the median checkpoint's pace: every rank's file, from the first
    # start to the last end of the writes (they write at once).
    rates = [r["checkpoints_on_disk"]["checkpoint_bytes_per_second"] for r in disk]
    report = {
        "command": f"bench/run_checkpoint_disk.py {build} {REPEAT}",
        "config": f"stencil1d, {RANKS} ranks x 1 thread, 32 subdomains x 20000 points per rank, {ITERATIONS} iterations "
                  f"x 16 steps, a checkpoint every {EVERY} iterations ({SAVES} saves), every one also to disk",
        "machine": f"{os.cpu_count()} cores; folder {folder} ({subprocess.run(['df', '--output=fstype', str(folder.parent)], capture_output=True, text=True).stdout.split()[-1]})",
        "repeat": REPEAT,
        "median_seconds": {"memory_only": t_memory, "with_disk": t_disk},
        "seconds_between_checkpoints": interval,
        "disk_cost_per_checkpoint_seconds": per_checkpoint,
        "disk_cost_share_of_interval": per_checkpoint / interval,
        "state_bytes_per_checkpoint": med([r["checkpoints_on_disk"]["bytes"] for r in disk]) / SAVES,
        "saves_that_waited": [r["checkpoints_on_disk"]["waited"] for r in disk],
        "median_checkpoint_write_bytes_per_second": med(rates),
        "median_dd_bytes_per_second": med(dd),
        "write_rate_over_dd": med(rates) / med(dd),
        "checksums": sorted({r["result"]["checksum"] for r in memory + disk}),
    }
    (root / "bench/results/checkpoint_disk.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("median_seconds", "disk_cost_share_of_interval", "write_rate_over_dd",
                                              "checksums")}))


if __name__ == "__main__":
    main()
