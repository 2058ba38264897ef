#!/usr/bin/env python3
"""Crash recovery across nodes against one machine: the distributed
rampart-stencil1d, 32 subdomains of 2000 points per rank, 1000 iterations
of 16 steps, 1 worker thread per rank, a spare; rank 1 killed with SIGKILL
at iteration 500. Two sizes: 6 ranks + 1 spare (2 ranks a node, the spare
on the third: 7 processes on this machine's cores) and 2 ranks + 1 spare
(one process a node). Interleaved, each repetition runs each size
- on 3 nodes of the test cluster (tools/rampart-cluster), over TCP, with
  MPI's defaults (given 2 slots a node, it takes every node for one with
  cores of its own, and its processes poll without yielding);
- the same, MPI told that the cores are shared (mpi_yield_when_idle: an
  idle process yields its core, as Open MPI does by itself on one machine
  that it knows is oversubscribed): the nodes share this machine's cores,
  which a cluster's nodes do not;
- on this machine alone (shared memory between the ranks);
and a fault-free run of each. Records the phases of each recovery as
rampart-run reports them, and whether each result equals the fault-free
one; writes bench/results/cluster.json. Needs root (the test cluster).

usage: bench/run_cluster.py [build-dir] [repeat=20]
"""
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 20
root = Path(__file__).resolve().parent.parent
tools = root / "tools"
NODES, KILL = 3, "1@iter500"
SIZES = {"6_ranks": (6, 2), "2_ranks": (2, 1)}  # ranks, slots a node


def app(ranks):
    return [str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * ranks), "--points", "2000",
            "--iterations", "1000", "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]
PLACES = ("nodes", "nodes_yield", "one_machine")
PHASES = ("detect_ms", "agree_ms", "takeover_ms", "resend_ms", "recover_ms")


def run(size, where, kill):
    ranks, slots = SIZES[size]
    cmd = [str(tools / "rampart-run"), "-n", str(ranks), "--spares", "1", "--threads", "1", "--json"]
    if where.startswith("nodes"):
        hosts = subprocess.run([str(tools / "rampart-cluster"), "hosts", "--slots", str(slots)], check=True,
                               capture_output=True, text=True).stdout.strip()
        cmd += ["--hosts", hosts, "--launch-agent", str(tools / "rampart-cluster-agent"), "--mpiexec-args",
                "--mca btl_tcp_if_include 10.77.0.0/24 --prtemca oob_tcp_if_include 10.77.0.0/24"
                + (" --mca mpi_yield_when_idle true" if where == "nodes_yield" else "")]
    if kill:
        cmd += ["--kill", kill]
    done = subprocess.run(cmd + ["--"] + app(ranks), capture_output=True, text=True, timeout=300)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):  # no report: kept, with why, as a run that failed
        return {"exit_code": done.returncode, "failed": (done.stdout + done.stderr)[-2000:]}


def main():
    made = subprocess.run([str(tools / "rampart-cluster"), "up", "--nodes", str(NODES)], capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit(f"bench/run_cluster.py: no test cluster: {made.stdout.strip()} {made.stderr.strip()}")
    try:
        pairs = [(size, where) for size in SIZES for where in PLACES]
        runs = {f"{size}_{where}": {"free": [], "kill": []} for size, where in pairs}
        for i in range(REPEAT):
            for size, where in pairs:
                key = f"{size}_{where}"
                runs[key]["free"].append(run(size, where, None))
                r = run(size, where, KILL)
                runs[key]["kill"].append(r)
                print(f"run {i + 1} {key}: recover {r.get('recover_ms')} ms (detect {r.get('detect_ms')}, agree "
                      f"{r.get('agree_ms')}, take-over {r.get('takeover_ms')}, re-send {r.get('resend_ms')}), "
                      f"checksum {r.get('result', {}).get('checksum')}", flush=True)
    finally:
        subprocess.run([str(tools / "rampart-cluster"), "down"], capture_output=True)
    write(runs)


def write(runs):
    med = lambda xs: statistics.median(xs) if xs else None
    summary = {}
    for where, r in runs.items():
        reference = next((x["result"]["checksum"] for x in r["free"] if "result" in x), None)
        kills = r["kill"]
        summary[where] = {
            "median_ms": {p: med([x[p] for x in kills if x.get(p) is not None]) for p in PHASES},
            "identical": sum(x.get("result", {}).get("checksum") == reference and x["exit_code"] == 0 for x in kills),
            "runs": len(kills),
            "spares_used": sorted({x["spares_used"] for x in kills if "spares_used" in x}),
            "median_seconds": {"free": med([x["result"]["seconds"] for x in r["free"] if "result" in x]),
                               "kill": med([x["result"]["seconds"] for x in kills if "result" in x])},
            "hosts": kills[0].get("hosts"),
            "failed_runs": [x["failed"] for x in r["free"] + kills if "failed" in x],
        }
    ratio = {}
    for size in SIZES:
        one = summary[f"{size}_one_machine"]["median_ms"]["recover_ms"]
        for w in PLACES[:-1]:
            nodes = summary[f"{size}_{w}"]["median_ms"]["recover_ms"]
            ratio[f"{size}_{w}"] = round(nodes / one, 2) if nodes and one else None
    report = {
        "command": f"bench/run_cluster.py {build} {REPEAT}",
        "config": "stencil1d, 6 ranks + 1 spare and 2 ranks + 1 spare, 32 subdomains x 2000 points per rank, 1000 "
                  f"iterations x 16 steps, 1 worker thread per rank; rank 1 killed (SIGKILL) at iteration 500; across "
                  f"{NODES} namespace nodes (TCP; nodes_yield: with --mca mpi_yield_when_idle true) and on one "
                  "machine (shared memory); results compared with the fault-free run of the same size and place",
        "machine": f"{os.cpu_count()} cores, shared by all the processes of a run",
        "summary": summary,
        "recover_nodes_over_one_machine": ratio,
        "runs": {w: [{p: x.get(p) for p in PHASES} | {"checksum": x.get("result", {}).get("checksum")}
                     for x in r["kill"]] for w, r in runs.items()},
    }
    (root / "bench/results/cluster.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("summary", "recover_nodes_over_one_machine")}, indent=1))


if __name__ == "__main__":
    main()
