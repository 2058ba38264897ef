#!/usr/bin/env python3
"""Runs rampart-bench-store (the replicated store) through mpiexec in
its recorded configurations and writes

- bench/results/store.json: 4 and 8 ranks, 16 MiB per PE, 64-byte blocks,
  r = 4, without permutation and with permutation ranges of 4096 blocks
  (262144 bytes): every operation (submit, load_one_pe, load_all, the same
  loads into the program's memory, and the std::ifstream baselines), checked
  against the target figures;
- bench/results/store_ranges.json: submit / load_one_pe / load_all against
  the bytes per permutation range (the paper's Fig. 4a), 4 and 8 ranks;

then calls plot_store.py for bench/results/store_ranges.png.

Each row is one mpiexec run; its median_ms is the median over --repeat
repetitions of the slowest rank's time (see bench/store/bench_store.cpp).

usage: bench/run_store.py [build-dir] [--repeat 10] [--ranks 4,8] [--bytes-per-pe 16777216]
                          [--ranges 1024,4096,...] [--bind] [--out bench/results] [--skip-ranges] [--note TEXT]

The load average before each file is written is recorded too: other work on
the machine shows up directly in these times (2 cores, ranks oversubscribed).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
MIB = 1 << 20
# The target figures (4 ranks oversubscribed on 2 cores; the same at 8).
LIMITS_MS = {"submit": 300.0, "load_one_pe": 5.0, "load_all": 45.0}
HELD_SLACK = 1.05  # bytes held per PE <= r x data + 5%


def load_average():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def mpiexec():
    venv = root / ".venv" / "bin" / "mpiexec"
    return str(venv) if venv.exists() else (shutil.which("mpiexec") or "mpiexec")


def run(a, ranks, **opts):
    cmd = [mpiexec(), "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp", "--mca", "coll", "^han"]
    if a.bind:
        # As tools/rampart-run --threads 1: ranks spread over the cores, each bound to one.
        cmd += ["--map-by", "core:OVERSUBSCRIBE", "--rank-by", "span", "--bind-to", "core:overload-allowed"]
    cmd += ["-n", str(ranks), str(Path(a.build) / "bench" / "rampart-bench-store"), "--json",
            "--bytes-per-pe", str(a.bytes_per_pe), "--block-bytes", str(a.block_bytes),
            "--replicas", str(a.replicas), "--repeat", str(a.repeat)]
    for k, v in opts.items():
        cmd += ["--" + k.replace("_", "-"), str(v)]
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
    if p.returncode != 0:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"run_store.py: {' '.join(cmd)} failed with exit code {p.returncode}")
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        if not r.get("verified"):
            raise SystemExit(f"run_store.py: {r['op']} returned wrong bytes: {' '.join(cmd)}")
    return rows, " ".join(cmd[cmd.index("-n"):])


def show(r):
    extra = f"  held {r['held_over_r_times_data']:.3f} x r x data" if "held_over_r_times_data" in r else ""
    perm = r["permutation_range_bytes"] or "none"
    print(f"  {r['ranks']} ranks  perm {perm:>9}  {r['op']:16s} {r['bytes_per_rank'] / MIB:7.2f} MiB/rank  "
          f"median {r['median_ms']:9.3f} ms  (min {r['min_ms']:.3f}, max {r['max_ms']:.3f}){extra}", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", nargs="?", default="build", help="build directory (default: build)")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--ranks", default="4,8")
    p.add_argument("--bytes-per-pe", type=int, default=16 * MIB)
    p.add_argument("--block-bytes", type=int, default=64)
    p.add_argument("--replicas", type=int, default=4)
    p.add_argument("--permutation-range-bytes", type=int, default=4096 * 64,
                   help="the permuted configuration of store.json (default 4096 blocks of 64 bytes)")
    p.add_argument("--ranges", default=",".join(str(1024 << (2 * i)) for i in range(8)),
                   help="bytes per permutation range for store_ranges.json (default 1 KiB .. 16 MiB, x4)")
    p.add_argument("--bind", action="store_true", help="bind ranks to cores as tools/rampart-run --threads 1 does")
    p.add_argument("--skip-ranges", action="store_true", help="only store.json")
    p.add_argument("--timeout", type=float, default=900, help="seconds per mpiexec run")
    p.add_argument("--out", default=str(root / "bench" / "results"))
    p.add_argument("--note", default="", help="a remark stored in both JSON files (e.g. the machine's load)")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ranks = [int(x) for x in a.ranks.split(",")]
    command = "bench/run_store.py " + " ".join(sys.argv[1:])
    machine = f"{os.cpu_count()} cores"

    print(f"store: {a.bytes_per_pe} bytes per PE, {a.block_bytes}-byte blocks, r = {a.replicas}, "
          f"median of {a.repeat}")
    rows, checks = [], []
    for n in ranks:
        for perm in (0, a.permutation_range_bytes):
            got, cmd = run(a, n, permutation_range_bytes=perm)
            for r in got:
                r["command"] = cmd
                show(r)
                rows.append(r)
                # A load into the program's memory has the limit of its load.
                limit_ms = LIMITS_MS.get(r["op"].removesuffix("_into"))
                if limit_ms is not None:
                    checks.append({"ranks": n, "permutation_range_bytes": perm, "op": r["op"],
                                   "limit_ms": limit_ms, "median_ms": r["median_ms"],
                                   "met": r["median_ms"] <= limit_ms})
                if r["op"] == "submit":
                    limit = HELD_SLACK * r["replicas"] * r["bytes_per_pe"]
                    checks.append({"ranks": n, "permutation_range_bytes": perm, "op": "bytes_held_per_pe",
                                   "limit_bytes": limit, "bytes_held_per_pe": r["bytes_held_per_pe"],
                                   "met": r["bytes_held_per_pe"] <= limit})
    report = {"command": command, "machine": machine, "note": a.note, "load_average": load_average(),
              "oversubscribed": max(ranks) > (os.cpu_count() or 1),
              "bind": a.bind, "repeat": a.repeat,
              "timing": "median over repetitions of the slowest rank's time; ranks synchronised by an empty "
                        "store::load before each repetition",
              "limits_ms": LIMITS_MS, "held_limit": "r x bytes_per_pe x 1.05", "checks": checks, "rows": rows}
    (out / "store.json").write_text(json.dumps(report, indent=1) + "\n")
    print("checks:")
    for c in checks:
        if "limit_ms" in c:
            print(f"  {c['ranks']} ranks perm {c['permutation_range_bytes'] or 'none':>9} {c['op']:16s} "
                  f"{c['median_ms']:9.3f} ms <= {c['limit_ms']:g}: {'met' if c['met'] else 'NOT MET'}")
        else:
            print(f"  {c['ranks']} ranks perm {c['permutation_range_bytes'] or 'none':>9} bytes held "
                  f"{c['bytes_held_per_pe']:.0f} <= {c['limit_bytes']:.0f}: {'met' if c['met'] else 'NOT MET'}")

    if a.skip_ranges:
        return
    print("permutation range sweep (submit, load_one_pe, load_all)")
    sweep = []
    for n in ranks:
        for perm in [0] + [int(x) for x in a.ranges.split(",")]:
            if perm % a.block_bytes:
                continue
            got, cmd = run(a, n, permutation_range_bytes=perm, ops="submit,load_one_pe,load_all")
            for r in got:
                r["command"] = cmd
                show(r)
                sweep.append(r)
    (out / "store_ranges.json").write_text(json.dumps(
        {"command": command, "machine": machine, "note": a.note, "load_average": load_average(), "bind": a.bind, "repeat": a.repeat,
         "note": "permutation_range_bytes 0 is the run without permutation", "rows": sweep}, indent=1) + "\n")
    subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "plot_store.py"), "--results", str(out)],
                   check=False)


if __name__ == "__main__":
    main()
