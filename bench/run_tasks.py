#!/usr/bin/env python3
"""Runs rampart-bench-tasks and rampart-stencil1d in the configurations that
the task layer is measured by, writes the medians to bench/results/tasks.json and
bench/results/stencil1d.json, then calls plot_tasks.py for the plot of
per-task overhead against error rate (like Fig. 2 of the HPX resiliency paper).

usage: bench/run_tasks.py [build-dir]    (matplotlib needed only for the plot)
"""
import json
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
results = Path(__file__).resolve().parent / "results"
results.mkdir(exist_ok=True)
REPEAT = 3


def run_json(cmd):
    out = subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def bench_tasks(**kw):
    cmd = [build / "bench/rampart-bench-tasks", "--json", "--repeat", REPEAT]
    for k, v in kw.items():
        cmd += ["--" + k.replace("_", "-"), v]
    rows = run_json(cmd)
    med = {}
    for v in sorted({r["variant"] for r in rows}):
        rs = [r for r in rows if r["variant"] == v]
        m = dict(rs[0])
        m.pop("run")
        m["seconds"] = statistics.median(r["seconds"] for r in rs)
        m["per_task_us"] = statistics.median(r["per_task_us"] for r in rs)
        m["runs"] = [r["per_task_us"] for r in rs]
        med[v] = m
        print(f"  {v:32s} {m['threads']} thr grain {m['grain_us']:>5} err {m['error_rate']:<5} "
              f"{m['per_task_us']:.4f} us/task", flush=True)
    return med


def stencil(**kw):
    cmd = [build / "apps/rampart-stencil1d", "--json"]
    for k, v in kw.items():
        cmd += ["--" + k.replace("_", "-"), v]
    rows = [run_json(cmd)[-1] for _ in range(REPEAT)]
    m = dict(rows[0])
    m["seconds"] = statistics.median(r["seconds"] for r in rows)
    m["runs"] = [r["seconds"] for r in rows]
    print(f"  stencil {m['variant']:16s} err {m['error_rate']:<5} pts {m['points']:>6} "
          f"{m['seconds']:.3f} s  checksum {m['checksum']}", flush=True)
    return m


report = {"command": "bench/run_tasks.py " + str(build), "repeat": REPEAT, "tasks": {}, "sweep": {}}
print("artificial workload, 1,000,000 tasks, grain 0, no errors")
for threads in (1, 2):
    report["tasks"][f"grain0_threads{threads}"] = bench_tasks(tasks=1000000, grain_us=0, threads=threads)

print("grain 200 us, 1% errors (20,000 tasks: 1,000,000 would take 200 s per run)")
for rate in (0, 0.01):
    report["tasks"][f"grain200_err{rate}"] = bench_tasks(tasks=20000, grain_us=200, error_rate=rate, threads=1,
                                                         variant="async")
    report["tasks"][f"grain200_err{rate}"].update(
        bench_tasks(tasks=20000, grain_us=200, error_rate=rate, threads=1, variant="async_replay"))

print("error-rate sweep for the plot (grain 200 us, 5,000 tasks, 1 thread)")
for rate in (0, 0.01, 0.02, 0.05, 0.1):
    row = {}
    for v in ("async", "async_replay", "async_replay_validate", "async_replicate", "async_replicate_vote"):
        row.update(bench_tasks(tasks=5000, grain_us=200, error_rate=rate, threads=1, variant=v))
    report["sweep"][str(rate)] = row
(results / "tasks.json").write_text(json.dumps(report, indent=1) + "\n")

st = {"command": "bench/run_tasks.py " + str(build), "repeat": REPEAT, "hpx_config": {}, "case_a": {}}
print("stencil at the HPX configuration: 128 x 2000 points, 1000 iterations x 16 steps, 1 thread")
base = dict(subdomains=128, points=2000, iterations=1000, steps=16, threads=1)
for v in ("dataflow", "replay", "replay_checksum", "replicate_vote"):
    st["hpx_config"][v] = stencil(variant=v, **base)
for v in ("replay", "replay_checksum"):
    st["hpx_config"][v + "_err0.01"] = stencil(variant=v, error_rate=0.01, seed=7, **base)
print("stencil at the paper's case A shape: 128 x 16000 points, 100 iterations x 128 steps, 1 thread")
case_a = dict(subdomains=128, points=16000, iterations=100, steps=128, threads=1)
for v in ("dataflow", "replay", "replay_checksum"):
    st["case_a"][v] = stencil(variant=v, **case_a)
(results / "stencil1d.json").write_text(json.dumps(st, indent=1) + "\n")

subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "plot_tasks.py")], check=False)
