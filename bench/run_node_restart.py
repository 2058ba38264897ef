#!/usr/bin/env python3
"""A node lost and the job started again from its checkpoints on disk:
the distributed rampart-stencil1d on 6 ranks + 1 spare over 3 nodes of the
test cluster (tools/rampart-cluster, 2 slots a node), 24 subdomains of
20000 points, 1000 iterations of 16 steps, a checkpoint every 50 iterations
written to disk (--checkpoint-dir, --restart). Once a checkpoint is
complete on disk, node 1 is killed (every process in it, its launcher
daemon too), `repeat` times. Records, per run, whether the result equals
the fault-free run's, and the time from the kill until the program
computes again, split into
- detection: from the kill to rampart-run's word that it starts the job
  again (the launcher ended the job, rampart-run read the reports);
- relaunch: from the end of the lost job to the program's start on the
  hosts left (rampart-run's report);
- load: the ranks reading the newest complete checkpoint (its report).
Writes bench/results/node_restart.json. Needs root (the test cluster).

With `replicated` as third argument: a plain MPI program under process
replication instead, rampart-mpi-jacobi2d as 3 ranks x 2 replicas over the
3 nodes (size 240, 1500 sweeps, its residual printed every 100), node 1
killed once the job has shown 2 lines; rampart-run --restart starts it
again from its beginning (no checkpoints). Identical: the output is the
native run's line for line, each line once. Relaunch: from the end of the
lost job to the program's start again; there is nothing to load. Writes
bench/results/node_restart_replicated.json.

usage: bench/run_node_restart.py [build-dir] [repeat=20] [stencil|replicated]
"""
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 20
REPLICATED = len(sys.argv) > 3 and sys.argv[3] == "replicated"
root = Path(__file__).resolve().parent.parent
tools = root / "tools"
app = [str(build / "apps/rampart-stencil1d"), "--subdomains", "24", "--points", "20000", "--iterations", "1000",
       "--steps", "16", "--threads", "1", "--checkpoint-every", "50", "--json"]
CLUSTER = [str(tools / "rampart-cluster")]
if REPLICATED:
    app = [str(build / "apps/mpi/rampart-mpi-jacobi2d"), "--size", "240", "--iterations", "1500", "--check-every",
           "100", "--progress"]


def rampart_run(extra):
    hosts = subprocess.run(CLUSTER + ["hosts", "--slots", "2"], check=True, capture_output=True, text=True).stdout
    return [str(tools / "rampart-run"), "--hosts", hosts.strip(), "--launch-agent", str(tools / "rampart-cluster-agent"),
            "--mpiexec-args", "--mca btl_tcp_if_include 10.77.0.0/24 --prtemca oob_tcp_if_include 10.77.0.0/24",
            "--json"] + (["-n", "3", "--replicas", "2"] if REPLICATED else ["-n", "6", "--spares", "1", "--threads", "1"]) \
        + extra + ["--"] + app


def program_lines(out):
    return [line for line in out.splitlines() if not line.startswith("{")]


def one_run(reference):
    folder = tempfile.mkdtemp(prefix="node-restart-", dir=build)
    job = subprocess.Popen(rampart_run(["--restart"] + ([] if REPLICATED else ["--checkpoint-dir", folder])),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said, shown = {}, []

    def read_stderr():
        for line in job.stderr:
            said.setdefault("stderr", []).append(line)
            if "starting the job again" in line:
                said.setdefault("restart", time.time())

    def read_stdout():
        for line in job.stdout:
            shown.append(line)

    readers = [threading.Thread(target=read_stderr, daemon=True), threading.Thread(target=read_stdout, daemon=True)]
    for t in readers:
        t.start()
    complete = lambda: any(len(glob.glob(os.path.join(d, "rank-*.bin"))) == 6
                           for d in glob.glob(os.path.join(folder, "job-*", "checkpoints-0", "iteration-*")))
    ready = (lambda: len(shown) >= 2) if REPLICATED else complete
    while not ready() and job.poll() is None:
        time.sleep(0.01)
    killed = time.time()
    subprocess.run(CLUSTER + ["kill-node", "1"], check=True, capture_output=True)
    job.wait(timeout=600)
    for t in readers:
        t.join(timeout=10)
    shutil.rmtree(folder, ignore_errors=True)
    out = "".join(shown)
    r = json.loads(out.strip().splitlines()[-1])
    restart = (r.get("restarts_after_node_loss") or [{}])[0]
    detect = round((said["restart"] - killed) * 1000, 1) if "restart" in said else None
    same = program_lines(out) == reference if REPLICATED else r.get("result", {}).get("checksum") == reference
    x = {"identical": same and r["exit_code"] == 0 and bool(restart),
         "detection_ms": detect, "relaunch_ms": restart.get("relaunch_ms"), "load_ms": restart.get("load_ms"),
         "resumed_from_iteration": restart.get("resumed_from_iteration")}
    if not x["identical"]:  # what went wrong, kept
        x["output"] = (out + "".join(said.get("stderr", [])))[-3000:]
    parts = [x["detection_ms"], x["relaunch_ms"]] + ([] if REPLICATED else [x["load_ms"]])
    x["kill_to_computing_ms"] = round(sum(parts), 1) if None not in parts else None
    return x


def main():
    made = subprocess.run(CLUSTER + ["up", "--nodes", "3"], capture_output=True, text=True)
    if made.returncode != 0:
        sys.exit(f"bench/run_node_restart.py: no test cluster: {made.stdout.strip()} {made.stderr.strip()}")
    try:
        if REPLICATED:  # the program alone, as mpiexec runs it
            native = subprocess.run([str(root / ".venv/bin/mpiexec"), "--oversubscribe", "-n", "3"] + app,
                                    capture_output=True, text=True, check=True, env=dict(
                                        os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
            reference = program_lines(native.stdout)
        else:
            free = subprocess.run(rampart_run([]), capture_output=True, text=True, check=True).stdout
            reference = json.loads(free.strip().splitlines()[-1])["result"]["checksum"]
        runs = []
        for i in range(REPEAT):
            runs.append(one_run(reference))
            print(f"run {i + 1}: {runs[-1]}", flush=True)
    finally:
        subprocess.run(CLUSTER + ["down"], capture_output=True)
    med = lambda k: statistics.median([x[k] for x in runs if x[k] is not None]) if any(x[k] is not None for x in runs) \
        else None
    report = {
        "command": f"bench/run_node_restart.py {build} {REPEAT}" + (" replicated" if REPLICATED else ""),
        "config": "jacobi2d (plain MPI), 3 ranks x 2 replicas on 3 namespace nodes (2 slots each), size 240, 1500 "
                  "sweeps, residual printed every 100; node 1 killed once 2 lines were shown; rampart-run --restart "
                  "(from the beginning); identical: every output line as the native run's, each once"
        if REPLICATED else "stencil1d, 6 ranks + 1 spare on 3 namespace nodes (2 slots each), 24 subdomains x 20000 points, "
                  "1000 iterations x 16 steps, a checkpoint every 50 iterations to disk; node 1 (ranks 2, 3) killed "
                  "once a checkpoint is complete on disk; rampart-run --restart",
        "machine": f"{os.cpu_count()} cores shared by the 3 nodes",
        "reference": reference,
        "identical": sum(x["identical"] for x in runs),
        "runs": len(runs),
        "median_ms": {k: med(k) for k in ("detection_ms", "relaunch_ms", "load_ms", "kill_to_computing_ms")},
        "each": runs,
    }
    name = "node_restart_replicated.json" if REPLICATED else "node_restart.json"
    (root / "bench/results" / name).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: report[k] for k in ("identical", "runs", "median_ms")}))


if __name__ == "__main__":
    main()
