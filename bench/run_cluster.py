#!/usr/bin/env python3
"""Crash recovery across nodes against one machine: the distributed
rampart-stencil1d on 6 ranks + 1 spare, 32 subdomains of 2000 points per
rank, 1000 iterations of 16 steps, 1 worker thread per rank; rank 2 killed
with SIGKILL at iteration 500. Interleaved, each repetition runs it
- on 3 nodes of the test cluster (tools/rampart-cluster, 2 ranks a node,
  the spare on the third), over TCP;
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
RANKS, NODES, KILL = 6, 3, "2@iter500"
app = [str(build / "apps/rampart-stencil1d"), "--subdomains", str(32 * RANKS), "--points", "2000",
       "--iterations", "1000", "--steps", "16", "--threads", "1", "--variant", "dataflow", "--json"]
PHASES = ("detect_ms", "agree_ms", "takeover_ms", "resend_ms", "recover_ms")


def run(where, kill):
    cmd = [str(tools / "rampart-run"), "-n", str(RANKS), "--spares", "1", "--threads", "1", "--json"]
    if where == "nodes":
        hosts = subprocess.run([str(tools / "rampart-cluster"), "hosts", "--slots", "2"], check=True,
                               capture_output=True, text=True).stdout.strip()
        cmd += ["--hosts", hosts, "--launch-agent", str(tools / "rampart-cluster-agent"), "--mpiexec-args",
                "--mca btl_tcp_if_include 10.77.0.0/24 --prtemca oob_tcp_if_include 10.77.0.0/24"]
    if kill:
        cmd += ["--kill", kill]
    done = subprocess.run(cmd + ["--"] + app, capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    made = subprocess.run([str(tools / "rampart-cluster"), "up", "--nodes", str(NODES)], capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit(f"bench/run_cluster.py: no test cluster: {made.stdout.strip()} {made.stderr.strip()}")
    try:
        runs = {w: {"free": [], "kill": []} for w in ("nodes", "one_machine")}
        for i in range(REPEAT):
            for where in runs:
                runs[where]["free"].append(run(where, None))
                r = run(where, KILL)
                runs[where]["kill"].append(r)
                print(f"run {i + 1} {where}: recover {r['recover_ms']} ms (detect {r['detect_ms']}, agree "
                      f"{r['agree_ms']}, take-over {r['takeover_ms']}, re-send {r['resend_ms']}), checksum "
                      f"{r.get('result', {}).get('checksum')}", flush=True)
    finally:
        subprocess.run([str(tools / "rampart-cluster"), "down"], capture_output=True)
    write(runs)


def write(runs):
    med = lambda xs: statistics.median(xs) if xs else None
    reference = runs["one_machine"]["free"][0]["result"]["checksum"]
    summary = {}
    for where, r in runs.items():
        kills = r["kill"]
        summary[where] = {
            "median_ms": {p: med([x[p] for x in kills if x.get(p) is not None]) for p in PHASES},
            "identical": sum(x.get("result", {}).get("checksum") == reference and x["exit_code"] == 0 for x in kills),
            "runs": len(kills),
            "spares_used": sorted({x["spares_used"] for x in kills}),
            "median_seconds": {"free": med([x["result"]["seconds"] for x in r["free"] if "result" in x]),
                               "kill": med([x["result"]["seconds"] for x in kills if "result" in x])},
            "hosts": kills[0].get("hosts"),
        }
    nodes, one = summary["nodes"]["median_ms"]["recover_ms"], summary["one_machine"]["median_ms"]["recover_ms"]
    report = {
        "command": f"bench/run_cluster.py {build} {REPEAT}",
        "config": f"stencil1d, {RANKS} ranks + 1 spare, 32 subdomains x 2000 points per rank, 1000 iterations x 16 "
                  f"steps, 1 worker thread per rank; rank 2 killed (SIGKILL) at iteration 500; across {NODES} "
                  "namespace nodes (2 ranks each, TCP) and on one machine (shared memory)",
        "machine": f"{os.cpu_count()} cores, shared by all {RANKS + 1} processes in both cases",
        "reference_checksum": reference,
        "summary": summary,
        "recover_nodes_over_one_machine": round(nodes / one, 2) if nodes and one else None,
        "runs": {w: [{p: x.get(p) for p in PHASES} | {"checksum": x.get("result", {}).get("checksum")}
                     for x in r["kill"]] for w, r in runs.items()},
    }
    (root / "bench/results/cluster.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("summary", "recover_nodes_over_one_machine")}, indent=1))


if __name__ == "__main__":
    main()
