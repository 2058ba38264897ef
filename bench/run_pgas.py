#!/usr/bin/env python3
"""Runs the one-sided benchmark in one go on this machine: rampart's
distributed arrays (rampart-bench-pgas, with shadows and without) against
MPI's own windows (rampart-bench-mpi-one-sided), and what a failure costs
them. Writes bench/results/pgas.json with every figure, the ratios the
project is judged by, each next to its target with "met": true/false, the
commands, the machine and the date; prints a short table. plot_pgas.py
draws the figures from it.

  (a) latency and bandwidth, 2 ranks: rampart-bench-pgas --mode latency and
      --mode bandwidth, and rampart-bench-mpi-one-sided (both window kinds,
      which also gives the two-sided round trip), 5 jobs of each, the two
      programs alternating (each round: pgas latency, the same with one rank
      a node (RAMPART_RANKS_PER_NODE=1: the message path), MPI, pgas
      bandwidth);
      each figure is the median over the jobs of the job's figure (itself a
      median over samples, see the programs' header comments);
  (b) barrier at 2, 4 and 8 ranks: rampart-bench-pgas --mode barrier against
      the barrier_us of rampart-bench-mpi-one-sided --kinds allocate, 5 jobs
      of each, alternating, the median over the jobs;
  (c) the FT-ARMCI paper's fault experiment at 4 ranks: put and get of 8
      bytes into the next rank's block, 400 iterations, rank 1 killed
      (SIGKILL) at iteration 200, one job each, and the same without a kill
      (--kill-at -1) as the fault-free reference; plus, not judged, the same
      with 4000 iterations (the 400-iteration loop may end before the
      survivors notice the death: see "fault_long");
  (d) detection at 4 and 8 ranks: 20 jobs each (one kill per job, rank 1),
      the median, min and max of every_survivor_ms (the time from the kill
      until the last survivor knew).

Open MPI's launcher now and then fails to start a job before any rank ran
(PMIx's listener thread): such a job is started again, at most twice, and
counted in "restarts". A job that fails otherwise (exit code, no JSON, a
timeout, a detection that never happened) ends the script with its output.

usage: bench/run_pgas.py [build-dir] [--jobs 5] [--detection-jobs 20] [--out bench/results] [--note TEXT]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
MIB = 1 << 20
FLAGS = ["--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp", "--mca", "coll", "^han"]
LAUNCHER_FAILED = "listener thread failed"
OPS = ["put", "get", "acc", "read_inc"]
MPI_OP = {"put": "put", "get": "get", "acc": "acc", "read_inc": "fetch_and_op"}  # MPI's counterpart of each
# The Global Arrays figures the issue quotes (NGA_Put, NGA_Get, NGA_Acc, NGA_Read_inc), microseconds.
GA_US = {"put": 0.27, "get": 0.47, "acc": 0.32, "read_inc": 0.15}
FAULT = {"ranks": 4, "bytes": 8, "iterations": 400, "kill_at": 200, "kill_rank": 1, "gap_us": 50}
FAULT_LONG_ITERATIONS = 4000
FIRST_AFTER_KILL = 10    # "the first iterations after the kill": kill_at .. kill_at + 9
LATER_SLACK = 1.5        # later iterations "back to the fault-free latency": median <= 1.5 x fault-free median
EXTRA_AFTER_DETECTION_MS = 5.0
ACROSS_ITERATIONS = 2000  # calls per sample across nodes

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
commands = []   # every distinct command, as run (from "-n" on)
restarts = 0


def mpiexec():
    venv = root / ".venv" / "bin" / "mpiexec"
    return str(venv) if venv.exists() else (shutil.which("mpiexec") or "mpiexec")


def load_average():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def machine():
    cpu = None
    mem_gib = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / (1 << 20), 1)
    except OSError:
        pass
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    version = subprocess.run([mpiexec(), "--version"], capture_output=True, text=True, env=ENV).stdout
    return {"nproc": int(nproc) if nproc.isdigit() else os.cpu_count(), "cpu_model": cpu, "memory_gib": mem_gib,
            "mpi": version.splitlines()[0].strip() if version else None}


def job(a, ranks, program, args, ranks_per_node=None):
    """One mpiexec job; the JSON object rank 0 printed. Started again when
    the launcher failed to start; any other failure ends the script. With
    ranks_per_node, every that many ranks count as one node (the arrays'
    message path)."""
    global restarts
    nodes = ["-x", f"RAMPART_RANKS_PER_NODE={ranks_per_node}"] if ranks_per_node else []
    cmd = [mpiexec(), *FLAGS, *nodes, "-n", str(ranks), str(Path(a.build) / "bench" / program), "--json",
           *map(str, args)]
    shown = " ".join(cmd[cmd.index(nodes[0] if nodes else "-n"):])
    if shown not in commands:
        commands.append(shown)
    for attempt in range(3):
        try:
            p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, errors="replace", timeout=a.timeout)
        except subprocess.TimeoutExpired as e:
            raise SystemExit(f"run_pgas.py: {' '.join(cmd)} did not end within {a.timeout:g} s\n"
                             f"{(e.stdout or '')[-3000:]}{(e.stderr or '')[-3000:]}")
        rows = [line for line in p.stdout.splitlines() if line.startswith("{")]
        if p.returncode == 0 and len(rows) == 1:
            return json.loads(rows[0])
        if LAUNCHER_FAILED in p.stdout + p.stderr and not rows and attempt < 2:
            print(f"run_pgas.py: the launcher failed to start (attempt {attempt + 1}); starting it again",
                  file=sys.stderr, flush=True)
            restarts += 1
            time.sleep(1)
            continue
        sys.stderr.write(p.stdout[-5000:] + p.stderr[-5000:])
        raise SystemExit(f"run_pgas.py: {' '.join(cmd)} failed with exit code {p.returncode} "
                         f"({len(rows)} JSON lines)")


def leaves(obj, path=()):
    """(path, number) of every number in a nested dict."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (k,))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, obj


def median_over_jobs(objs):
    """The nested dict of the objects' medians, figure by figure, and of their min and max."""
    values = {}
    for o in objs:
        for path, v in leaves(o):
            values.setdefault(path, []).append(v)
    med, lo, hi = {}, {}, {}
    for path, vs in values.items():
        for d, f in ((med, statistics.median), (lo, min), (hi, max)):
            node = d
            for k in path[:-1]:
                node = node.setdefault(k, {})
            node[path[-1]] = f(vs)
    return med, lo, hi


def check(checks, name, value, op, target, unit, **extra):
    met = value <= target if op == "<=" else value >= target
    checks.append({"name": name, "value": value, "op": op, "target": target, "unit": unit, "met": met, **extra})


def fault_summary(kill, free, detection_ms):
    """The fault run against the fault-free run of the same operation."""
    k = FAULT["kill_at"]
    usual = statistics.median(free["median_us"])
    first = range(k, k + FIRST_AFTER_KILL)
    later = slice(k + FIRST_AFTER_KILL, None)
    toucher = kill.get("toucher_us") or []
    return {
        "fault_free_median_us": usual,
        "fault_free_max_of_max_us": max(free["max_us"]),
        "before_kill_median_us": statistics.median(kill["median_us"][:k]),
        "first_after_kill": {"iterations": [first.start, first.stop - 1],
                             "toucher_us": [toucher[i] for i in first] if toucher else None,
                             "median_us": [kill["median_us"][i] for i in first],
                             "max_us": [kill["max_us"][i] for i in first]},
        "first_after_kill_worst_us": max([kill["max_us"][i] for i in first] + [toucher[i] for i in first if toucher]),
        "later_median_us": statistics.median(kill["median_us"][later]),
        "later_toucher_median_us": statistics.median(toucher[later]) if toucher else None,
        "later_max_us": max(kill["max_us"][later]),
        "bound_first_us": usual + 1000 * (detection_ms + EXTRA_AFTER_DETECTION_MS),
        "bound_later_us": LATER_SLACK * usual,
    }


def long_summary(run):
    """The 4000-iteration run, not judged: where the slowest iterations were."""
    k = FAULT["kill_at"]
    mx, tu = run["max_us"], run.get("toucher_us") or []
    top = sorted(range(len(mx)), key=lambda i: -mx[i])[:8]
    return {"iterations": len(mx), "kill_at": k,
            "before_kill_median_us": statistics.median(run["median_us"][:k]),
            "after_kill_median_us": statistics.median(run["median_us"][k:]),
            "after_kill_toucher_median_us": statistics.median(tu[k:]) if tu else None,
            "slowest_iterations": [{"iteration": i, "max_us": mx[i], "median_us": run["median_us"][i],
                                    "toucher_us": tu[i] if tu else None} for i in top]}


def compact(obj, indent=1):
    """JSON with lists of numbers on one line each."""
    text = json.dumps(obj, indent=indent)
    return re.sub(r"\[\s*([-0-9.eE+,\s]+?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)


def rounded(series, digits=4):
    return [round(x, digits) for x in series]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", nargs="?", default="build", help="build directory (default: build)")
    p.add_argument("--jobs", type=int, default=5, help="jobs per latency, bandwidth and barrier figure")
    p.add_argument("--detection-jobs", type=int, default=20, help="jobs per number of ranks for detection")
    p.add_argument("--timeout", type=float, default=120, help="seconds per mpiexec job")
    p.add_argument("--out", default=str(root / "bench" / "results"))
    p.add_argument("--note", default="", help="a remark stored in the JSON file")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    report = {"command": "bench/run_pgas.py " + " ".join(sys.argv[1:]),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "note": a.note, "load_average_before": load_average(),
              "launcher": f"{mpiexec()} {' '.join(FLAGS)} (OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)",
              "oversubscribed": 8 > (os.cpu_count() or 1)}
    print(f"run_pgas.py: {report['machine']['nproc']} cores, {report['machine']['cpu_model']}", flush=True)

    # (a) latency and bandwidth at 2 ranks, the programs alternating; and the
    # latency across nodes (one rank a node: the message path), with fewer
    # calls per sample (each takes tens of microseconds).
    lat_jobs, bw_jobs, mpi_jobs, across_jobs = [], [], [], []
    for i in range(a.jobs):
        lat_jobs.append(job(a, 2, "rampart-bench-pgas", ["--mode", "latency"])["latency_us"])
        across_jobs.append(job(a, 2, "rampart-bench-pgas", ["--mode", "latency", "--iterations", ACROSS_ITERATIONS],
                               ranks_per_node=1)["latency_us"])
        mpi_jobs.append(job(a, 2, "rampart-bench-mpi-one-sided", []))
        bw_jobs.append(job(a, 2, "rampart-bench-pgas", ["--mode", "bandwidth"])["bandwidth_GBps"])
        print(f"  latency/bandwidth round {i + 1}/{a.jobs}: put {lat_jobs[-1]['shadows']['put']['median']:.3f} us "
              f"(MPI allocate {mpi_jobs[-1]['latency_us']['allocate']['put']:.3f})", flush=True)
    lat, lat_lo, lat_hi = median_over_jobs(lat_jobs)
    bw, bw_lo, bw_hi = median_over_jobs(bw_jobs)
    mpi, mpi_lo, mpi_hi = median_over_jobs([{k: m[k] for k in ("latency_us", "bandwidth_GBps", "round_trip_us",
                                                                "barrier_us")} for m in mpi_jobs])
    latency_us = {"rampart_shadows": {op: lat["shadows"][op]["median"] for op in OPS},
                  "rampart_no_shadows": {op: lat["no_shadows"][op]["median"] for op in OPS}}
    for kind in ("allocate", "create"):
        latency_us[f"mpi_{kind}"] = {op: mpi["latency_us"][kind][MPI_OP[op]] for op in OPS}
    latency_us["ga_reference"] = dict(GA_US)
    across, across_lo, across_hi = median_over_jobs(across_jobs)
    latency_across_nodes_us = {"rampart_shadows": {op: across["shadows"][op]["median"] for op in OPS},
                               "rampart_no_shadows": {op: across["no_shadows"][op]["median"] for op in OPS},
                               "two_sided_round_trip": mpi["round_trip_us"],
                               "min_max_over_jobs": {k: {op: [across_lo[k][op]["median"], across_hi[k][op]["median"]]
                                                         for op in OPS} for k in ("shadows", "no_shadows")}}
    latency_spread = {"rampart_shadows": {op: [lat_lo["shadows"][op]["median"], lat_hi["shadows"][op]["median"]]
                                          for op in OPS},
                      "rampart_no_shadows": {op: [lat_lo["no_shadows"][op]["median"],
                                                  lat_hi["no_shadows"][op]["median"]] for op in OPS}}
    for kind in ("allocate", "create"):
        latency_spread[f"mpi_{kind}"] = {op: [mpi_lo["latency_us"][kind][MPI_OP[op]],
                                              mpi_hi["latency_us"][kind][MPI_OP[op]]] for op in OPS}
    bandwidth = {"rampart_shadows": bw["shadows"], "rampart_no_shadows": bw["no_shadows"],
                 "mpi_allocate": mpi["bandwidth_GBps"]["allocate"], "mpi_create": mpi["bandwidth_GBps"]["create"]}
    bandwidth_spread = {"rampart_shadows": {op: {b: [bw_lo["shadows"][op][b], bw_hi["shadows"][op][b]]
                                                 for b in bw["shadows"][op]} for op in ("put", "get")},
                        "rampart_no_shadows": {op: {b: [bw_lo["no_shadows"][op][b], bw_hi["no_shadows"][op][b]]
                                                    for b in bw["no_shadows"][op]} for op in ("put", "get")},
                        "mpi_allocate": {op: {b: [mpi_lo["bandwidth_GBps"]["allocate"][op][b],
                                                  mpi_hi["bandwidth_GBps"]["allocate"][op][b]]
                                              for b in mpi["bandwidth_GBps"]["allocate"][op]} for op in ("put", "get")}}
    report.update({"latency_us": latency_us, "latency_us_min_max_over_jobs": latency_spread,
                   "latency_across_nodes_us": latency_across_nodes_us,
                   "round_trip_us_2_ranks": mpi["round_trip_us"],
                   "bandwidth_GBps": bandwidth, "bandwidth_GBps_min_max_over_jobs": bandwidth_spread,
                   "latency_jobs": {"rampart": lat_jobs, "mpi": [m["latency_us"] for m in mpi_jobs]},
                   "bandwidth_jobs": {"rampart": bw_jobs, "mpi": [m["bandwidth_GBps"] for m in mpi_jobs]}})

    # (b) barrier at 2, 4 and 8 ranks, alternating.
    barrier = {}
    for n in (2, 4, 8):
        ours, theirs = [], []
        for _ in range(a.jobs):
            ours.append(job(a, n, "rampart-bench-pgas", ["--mode", "barrier"])["barrier_us"]["median"])
            theirs.append(job(a, n, "rampart-bench-mpi-one-sided", ["--kinds", "allocate"])["barrier_us"])
        barrier[str(n)] = {"rampart_us": statistics.median(ours), "mpi_us": statistics.median(theirs),
                           "ratio": statistics.median(ours) / statistics.median(theirs),
                           "rampart_jobs_us": ours, "mpi_jobs_us": theirs}
        print(f"  barrier {n} ranks: rampart {barrier[str(n)]['rampart_us']:.3f} us, "
              f"MPI_Barrier {barrier[str(n)]['mpi_us']:.3f} us", flush=True)
    report["barrier"] = barrier

    # (d) first, so that (c) can be judged against the detection time: 4 and 8 ranks interleaved.
    det = {"4": [], "8": []}
    for _ in range(a.detection_jobs):
        for n in (4, 8):
            d = job(a, n, "rampart-bench-pgas", ["--mode", "detection", "--kill-rank", "1"])["detection_ms"]
            if d["every_survivor_ms"] < 0 or len(d["per_rank_ms"]) != n - 1 or min(d["per_rank_ms"]) < 0:
                raise SystemExit(f"run_pgas.py: detection at {n} ranks: not every survivor noticed the kill: {d}")
            det[str(n)].append(d["every_survivor_ms"])
    detection = {n: {"median_ms": statistics.median(v), "min_ms": min(v), "max_ms": max(v), "jobs_ms": v}
                 for n, v in det.items()}
    for n, d in detection.items():
        print(f"  detection {n} ranks: median {d['median_ms']:.2f} ms (min {d['min_ms']:.2f}, max {d['max_ms']:.2f}),"
              f" {len(d['jobs_ms'])} jobs", flush=True)
    report["detection"] = detection

    # (c) the fault experiment, with and without a kill.
    fault = {}
    fargs = ["--mode", "fault", "--bytes", FAULT["bytes"], "--iterations", FAULT["iterations"],
             "--kill-rank", FAULT["kill_rank"], "--gap-us", FAULT["gap_us"]]
    for op in ("put", "get"):
        kill = job(a, FAULT["ranks"], "rampart-bench-pgas", fargs + ["--op", op, "--kill-at", FAULT["kill_at"]])["fault"]
        free = job(a, FAULT["ranks"], "rampart-bench-pgas", fargs + ["--op", op, "--kill-at", -1])["fault"]
        if "toucher_us" not in kill:
            raise SystemExit(f"run_pgas.py: the fault run of {op} has no toucher series")
        fault[op] = {"summary": fault_summary(kill, free, detection["4"]["median_ms"]),
                     "kill": {"median_us": rounded(kill["median_us"]), "max_us": rounded(kill["max_us"]),
                              "toucher_us": rounded(kill["toucher_us"])},
                     "fault_free": {"median_us": rounded(free["median_us"]), "max_us": rounded(free["max_us"])}}
        s = fault[op]["summary"]
        print(f"  fault {op}: fault-free median {s['fault_free_median_us']:.3f} us; first {FIRST_AFTER_KILL} after "
              f"the kill worst {s['first_after_kill_worst_us']:.3f} us; later median {s['later_median_us']:.3f} us",
              flush=True)
    fault_long = {}
    for op in ("put", "get"):
        run = job(a, FAULT["ranks"], "rampart-bench-pgas",
                  ["--mode", "fault", "--bytes", FAULT["bytes"], "--iterations", FAULT_LONG_ITERATIONS,
                   "--kill-rank", FAULT["kill_rank"], "--gap-us", FAULT["gap_us"], "--op", op,
                   "--kill-at", FAULT["kill_at"]])["fault"]
        fault_long[op] = long_summary(run)
    report["fault"] = {**FAULT, "first_after_kill_iterations": FIRST_AFTER_KILL, "later_slack": LATER_SLACK,
                       "detection_ms_used": detection["4"]["median_ms"], **fault}
    report["fault_long"] = {"note": f"not judged: the same experiment with {FAULT_LONG_ITERATIONS} iterations, "
                                    "long enough for the survivors to notice the death during the loop",
                            **fault_long}

    # The targets.
    checks = []
    ls, ln = latency_us["rampart_shadows"], latency_us["rampart_no_shadows"]
    check(checks, "put with shadows vs GA NGA_Put", ls["put"], "<=", GA_US["put"], "us")
    check(checks, "put with shadows / without shadows", ls["put"] / ln["put"], "<=", 2.0, "ratio",
          numerator_us=ls["put"], denominator_us=ln["put"])
    check(checks, "get with shadows", ls["get"], "<=", 0.2, "us", without_shadows_us=ln["get"])
    check(checks, "read_inc with shadows", ls["read_inc"], "<=", 0.3, "us")
    rt = mpi["round_trip_us"]
    for op in OPS:
        check(checks, f"across nodes: {op} with shadows / two-sided 8-byte round trip",
              latency_across_nodes_us["rampart_shadows"][op] / rt, "<=", 3.0, "ratio",
              numerator_us=latency_across_nodes_us["rampart_shadows"][op], denominator_us=rt)
    mib = str(MIB)
    for op, target in (("put", 0.45), ("get", 0.9)):
        num, den = bandwidth["rampart_shadows"][op][mib], bandwidth["mpi_allocate"][op][mib]
        check(checks, f"1 MiB {op} with shadows / MPI_{op.capitalize()} on Win_allocate", num / den, ">=", target,
              "ratio", numerator_GBps=num, denominator_GBps=den)
    for n in ("4", "8"):
        b = barrier[n]
        check(checks, f"barrier / MPI_Barrier at {n} ranks", b["ratio"], "<=", 2.0, "ratio",
              numerator_us=b["rampart_us"], denominator_us=b["mpi_us"])
    for op in ("put", "get"):
        s = fault[op]["summary"]
        check(checks, f"fault {op}: first {FIRST_AFTER_KILL} iterations after the kill (worst rank) vs "
                      f"fault-free median + detection + {EXTRA_AFTER_DETECTION_MS:g} ms",
              s["first_after_kill_worst_us"], "<=", s["bound_first_us"], "us",
              fault_free_median_us=s["fault_free_median_us"], detection_ms=detection["4"]["median_ms"])
        later = max(s["later_median_us"], s["later_toucher_median_us"])
        check(checks, f"fault {op}: later iterations (median, all and toucher) vs {LATER_SLACK:g} x fault-free median",
              later, "<=", s["bound_later_us"], "us", fault_free_median_us=s["fault_free_median_us"])
    report["checks"] = checks
    report["commands"] = commands
    report["restarts"] = restarts
    report["load_average_after"] = load_average()
    report["seconds"] = round(time.monotonic() - started, 1)
    report["timing"] = ("latency and bandwidth: each job's figure is its median over samples (see the programs' "
                        "header comments); each figure here is the median over the jobs; barrier: rank 0's median "
                        "per job, the median over the jobs; detection: time from the kill until the last survivor "
                        "knew, per job")
    (out / "pgas.json").write_text(compact(report) + "\n")

    print(f"\nlatency, 8 bytes, 2 ranks, us (median of {a.jobs} jobs)")
    print(f"  {'':20s}" + "".join(f"{op:>10s}" for op in OPS))
    for name, row in latency_us.items():
        print(f"  {name:20s}" + "".join(f"{row[op]:10.3f}" for op in OPS))
    print(f"  two-sided round trip {mpi['round_trip_us']:.3f} us")
    print("  across nodes (one rank a node, the message path):")
    for name in ("rampart_shadows", "rampart_no_shadows"):
        print(f"  {name:20s}" + "".join(f"{latency_across_nodes_us[name][op]:10.3f}" for op in OPS))
    sizes = list(bandwidth["mpi_allocate"]["put"])
    print("bandwidth, GB/s\n  " + " " * 24 + "".join(f"{int(b) // 1024:>8d}K" for b in sizes))
    for name in ("rampart_shadows", "rampart_no_shadows", "mpi_allocate", "mpi_create"):
        for op in ("put", "get"):
            print(f"  {name:20s} {op:3s}" + "".join(f"{bandwidth[name][op][b]:9.2f}" for b in sizes))
    print("targets")
    width = max(len(c["name"]) for c in checks)
    for c in checks:
        print(f"  {c['name']:{width}s} {c['value']:10.3f} {c['op']} {c['target']:<10.4g} "
              f"{'met' if c['met'] else 'NOT MET'}")
    print(f"wrote {out / 'pgas.json'} ({report['seconds']} s, {restarts} launcher restarts)")


if __name__ == "__main__":
    main()
