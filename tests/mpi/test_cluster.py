#!/usr/bin/env python3
"""Runs across the nodes of the test cluster (tools/rampart-cluster, made by
the CTest fixture cluster.up) and checks each result against a fault-free
one, bit for bit.

usage: test_cluster.py TOOLS SCENARIO PROGRAM [ARGS...]
  rank_killed     a rampart program; rank 2 killed at iteration 40, a spare on
                  another node takes its place
  replica_killed  a plain MPI program under --replicas 2; replica 0 of rank 1
                  killed at its 20th send, the other replica on another node
                  goes on
  node_lost       a rampart program; a whole node killed while it runs: the
                  job ends, and rampart-run names the node
  node_ranks_lost rampart-kmeans on 8 ranks over 4 nodes, its points in the
                  store with 2 copies: both ranks of node 1 killed at once; the
                  survivors load every point (the copies are on other nodes)
                  and the result is the fault-free one
  node_ranks_lost_by_node
                  the same under plain mpiexec --map-by node (another
                  launcher's placement: rank q on node q mod 4), ranks 1
                  and 5 of one node killed: the store orders the ranks by
                  node, so their copies are still elsewhere
  node_restart    a rampart program that saves checkpoints (with
                  --checkpoint-dir); a node killed once a checkpoint is complete
                  on disk: rampart-run --restart starts it again on the nodes
                  left, it resumes from there, and its result is the fault-free
                  one
  replica_node_restart
                  a plain MPI program under --replicas 2 --restart; a whole
                  node killed while it runs: the launcher ends the job, and
                  rampart-run starts it again from its beginning on the 2
                  nodes left; its output is the native run's, each line once
  slurm           a rampart program under the test cluster's Slurm (made here
                  on 3 nodes: controller, node daemons, munge): sbatch a
                  script that calls rampart-run, which takes its hosts from
                  the allocation; once fault-free, once with rank 2 killed,
                  its spare on another node
Exits 77 (skipped) where the cluster cannot be made (not root, no namespaces),
or, for slurm, where Slurm's daemons are not installed.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_run import run_in_session  # noqa: E402

TIMEOUT = 120


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def run(cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = run_in_session(cmd, TIMEOUT, env=env, merge_output=True)
    if done is None:
        fail(f"no end within {TIMEOUT} s: {' '.join(cmd)}")
    return done.returncode, done.stdout


def report_of(out):
    for line in reversed(out.splitlines()):
        if line.startswith("{") and '"exit_code"' in line:
            return json.loads(line)
    fail("no report from rampart-run:\n" + out[-3000:])


def checksum_of(out):
    for line in out.splitlines():
        if "checksum" in line:
            return line.split()[-1].strip('",}')
    fail("no checksum in the output:\n" + out[-3000:])


def main():
    tools, scenario, program = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    cluster = [os.path.join(tools, "rampart-cluster")]
    code, out = run(cluster + ["check"])
    if code == 77:
        print(out.strip())
        return 77
    if scenario == "slurm":
        return slurm(tools, cluster, program)
    nodes = "4" if scenario.startswith("node_ranks_lost") else "3"
    code, hosts = run(cluster + ["hosts", "--slots", "2", "--nodes", nodes])
    if code != 0:
        fail("no test cluster (the fixture cluster.up makes it): " + hosts)
    rampart_run = [os.path.join(tools, "rampart-run"), "--hosts", hosts.strip(),
                   "--launch-agent", os.path.join(tools, "rampart-cluster-agent"),
                   "--mpiexec-args", "--mca btl_tcp_if_include 10.77.0.0/24 --prtemca oob_tcp_if_include 10.77.0.0/24",
                   "--json"]
    if scenario == "node_ranks_lost_by_node":
        return node_ranks_lost_by_node(tools, hosts.strip(), program)
    return {"rank_killed": rank_killed, "replica_killed": replica_killed, "node_lost": node_lost,
            "node_restart": node_restart, "node_ranks_lost": node_ranks_lost,
            "replica_node_restart": replica_node_restart}[scenario](rampart_run, cluster, program)


def spans_nodes(report, want):
    hosts = report.get("hosts") or []
    if len(set(hosts)) != want:
        fail(f"the processes ran on {sorted(set(hosts))}, not on {want} nodes")


def rank_killed(rampart_run, cluster, program):
    base = rampart_run + ["-n", "6", "--spares", "1", "--threads", "1"]
    code, out = run(base + ["--"] + program)
    reference = checksum_of(out)
    if code != 0:
        fail("the fault-free run failed:\n" + out[-3000:])
    code, out = run(base + ["--kill", "2@iter40", "--"] + program)
    r = report_of(out)
    print(f"fault-free {reference}, rank 2 killed {checksum_of(out)}; recover_ms {r['recover_ms']}, hosts {r['hosts']}")
    spans_nodes(r, 3)
    if code != 0 or checksum_of(out) != reference:
        fail("the result differs from the fault-free run's:\n" + out[-3000:])
    if r["ranks_lost"] != [2] or r["spares_used"] != 1:
        fail(f"rank 2 was not killed and replaced: lost {r['ranks_lost']}, spares used {r['spares_used']}")
    if r["hosts"][6] == r["hosts"][2]:
        fail("the spare was put on the node of the rank it replaced")
    print("identical across nodes, rank 2 replaced")
    return 0


def replica_killed(rampart_run, cluster, program):
    mpiexec = os.path.join(os.path.dirname(cluster[0]), "..", ".venv", "bin", "mpiexec")
    native_run = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpiexec_retry.sh"), mpiexec,
                  "--oversubscribe", "-n", "3"] + program
    code, out = run(native_run)
    if code != 0:
        fail("the native run failed:\n" + out[-3000:])
    reference = checksum_of(out)
    code, out = run(rampart_run + ["-n", "3", "--replicas", "2", "--kill", "1.0@send20", "--"] + program)
    r = report_of(out)
    print(f"native {reference}, replica 1.0 killed {checksum_of(out)}; lost {r['processes_lost']}, hosts {r['hosts']}")
    spans_nodes(r, 3)
    if code != 0 or checksum_of(out) != reference:
        fail("the result differs from the native run's:\n" + out[-3000:])
    if r["processes_killed"] != [1] or r["processes_lost"] != [1]:
        fail(f"process 1 alone was to be killed and lost: killed {r['processes_killed']}, lost {r['processes_lost']}")
    if r["hosts"][1] == r["hosts"][4]:
        fail("both replicas of rank 1 ran on one node")
    print("identical across nodes, the other replica on another node went on")
    return 0


def replica_node_restart(rampart_run, cluster, program):
    mpiexec = os.path.join(os.path.dirname(cluster[0]), "..", ".venv", "bin", "mpiexec")
    code, native = run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpiexec_retry.sh"), mpiexec,
                        "--oversubscribe", "-n", "3"] + program)
    if code != 0 or len(native.splitlines()) < 4:
        fail("the native run failed, or printed less than its progress:\n" + native[-3000:])
    # Killed once the job has shown 2 lines of its progress: the run started
    # again must not show them again.
    folder = tempfile.mkdtemp(prefix="rampart-cluster-test-", dir=os.getcwd())
    output = os.path.join(folder, "output")
    shown = lambda: sum(line.startswith("jacobi2d:") for line in open(output)) >= 2
    try:
        code, out = kill_node_once(cluster, rampart_run + ["-n", "3", "--replicas", "2", "--restart", "--"] + program,
                                   shown, output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    r = report_of(out)
    restarts = r.get("restarts_after_node_loss", [])
    print(f"native {checksum_of(native)}, node 1 killed {checksum_of(out)}; restarts {restarts}, hosts {r['hosts']}")
    program_lines = [line for line in out.splitlines() if line.startswith("jacobi2d:")]
    if code != 0 or program_lines != native.strip().splitlines():
        fail("the output differs from the native run's:\n" + out[-3000:])
    if len(restarts) != 1 or restarts[0]["resumed_from_iteration"] is not None or len(set(r["hosts"])) != 2:
        fail("the job was not started again from its beginning on the 2 nodes left")
    if rampart_launch_apart(r):
        fail(f"the replicas of a rank shared a node after the restart: {r['hosts']}")
    print("identical across nodes after a node's loss, started again from the beginning, each line once")
    return 0


def rampart_launch_apart(r):
    """The ranks whose replicas shared a host."""
    n, hosts = r["ranks"], r["hosts"]
    return [i for i in range(n) if len({hosts[k * n + i] for k in range(r["replicas"])}) < r["replicas"]]


def kill_node_once(cluster, cmd, ready, output=None):
    """Starts cmd, kills node 1 once ready() holds; the output (kept in the
    file `output` as it comes, if given)."""
    sink = open(output, "w+") if output else subprocess.PIPE
    job = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not ready():
        if time.monotonic() > deadline or job.poll() is not None:
            job.kill()
            fail("the job did not reach the moment of the kill:\n" + (job.communicate()[0] or open(output).read())[-3000:])
        time.sleep(0.05)
    subprocess.run(cluster + ["kill-node", "1"], check=True)
    out = job.communicate(timeout=TIMEOUT)[0]
    if output:
        sink.seek(0)
        out = sink.read()
        sink.close()
    print(f"rampart-run's exit code: {job.returncode}")
    return job.returncode, out


def node_lost(rampart_run, cluster, program):
    reports = tempfile.mkdtemp(prefix="rampart-cluster-test-", dir=os.getcwd())
    started = lambda: len(glob.glob(os.path.join(reports, "*", "rank.start.*"))) == 7  # every process runs it
    code, out = kill_node_once(cluster, rampart_run + ["--report-dir", reports, "-n", "6", "--spares", "1", "--threads",
                                                      "1", "--"] + program, started)
    os.rmdir(reports)
    r = report_of(out)
    print(out[-1500:])
    if code == 0 or r["exit_code"] == 0:
        fail("rampart-run said that the job succeeded")
    if r["nodes_lost"] != ["rpnode1"] or "node(s) rpnode1 lost" not in out:
        fail(f"rampart-run did not name the lost node: nodes_lost {r['nodes_lost']}")
    print("the lost node was named")
    return 0


def node_ranks_lost(rampart_run, cluster, program):
    code, out = run(program + ["--threads", "1", "--json"])
    reference = json.loads(out.strip().splitlines()[-1])
    code, out = run(rampart_run + ["-n", "8", "--threads", "1", "--kill", "2@iter5", "--kill", "3@iter5", "--"] +
                    program + ["--threads", "1", "--json"])
    r = report_of(out)
    result = r.get("result") or fail("no result:\n" + out[-3000:])
    print(f"hosts {r['hosts']}; lost {result['lost_ranks']}, {result['points_reloaded']} points reloaded, "
          f"{result['replicas']} copies of each")
    spans_nodes(r, 4)
    if r["hosts"][2] != r["hosts"][3] or r["hosts"][2] in (r["hosts"][0], r["hosts"][4], r["hosts"][6]):
        fail("ranks 2 and 3 are not alone together on a node")
    if code != 0 or result["assignments"] != reference["assignments"]:
        fail("the assignments differ from the fault-free run's:\n" + out[-3000:])
    if result["lost_ranks"] != [2, 3] or result["points_reloaded"] <= 0:
        fail("ranks 2 and 3 were not lost, or no point was loaded from the store")
    print("identical across nodes after a node's ranks were lost together")
    return 0


def node_ranks_lost_by_node(tools, hosts, program):
    """kmeans under mpiexec itself, which maps ranks round-robin over the
    nodes: the store must find the nodes on its own."""
    code, out = run(program + ["--threads", "1", "--json"])
    reference = json.loads(out.strip().splitlines()[-1])
    folder = tempfile.mkdtemp(prefix="rampart-cluster-test-", dir=os.getcwd())
    try:
        os.environ.update(RAMPART_KILL="1@iter5,5@iter5", RAMPART_REPORT=os.path.join(folder, "rank"))
        mpiexec = os.path.join(tools, "..", ".venv", "bin", "mpiexec")
        code, out = run(["python3", os.path.join(tools, "rampart_launch.py"), mpiexec, "--with-ft", "ulfm", "--mca", "btl",
                         "self,sm,tcp", "--mca", "coll", "^han", "--host", hosts, "--map-by", "node", "--bind-to",
                         "none", "--prtemca", "plm_ssh_agent", os.path.join(tools, "rampart-cluster-agent"),
                         "--mca", "btl_tcp_if_include", "10.77.0.0/24", "--prtemca", "oob_tcp_if_include",
                         "10.77.0.0/24", "-x", "RAMPART_KILL", "-x", "RAMPART_REPORT", "-n", "8"] +
                        program + ["--threads", "1", "--json"])
        host = {}
        for f in glob.glob(os.path.join(folder, "rank.start.*")):
            note = json.load(open(f))
            host[note["process"]] = note["host"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"hosts {[host.get(q) for q in range(8)]}")
    if len(host) != 8 or len(set(host.values())) != 4 or host[1] != host[5] or \
            list(host.values()).count(host[1]) != 2:
        fail("mpiexec did not put ranks 1 and 5 alone together on a node, 2 ranks on each of 4 nodes:\n" + out[-3000:])
    # The last JSON line: Open MPI may warn after it (libevent, of a dead peer's socket).
    results = [line for line in out.splitlines() if line.startswith('{"program"')]
    result = json.loads(results[-1]) if results else fail("no result:\n" + out[-3000:])
    print(f"lost {result['lost_ranks']}, {result['points_reloaded']} points reloaded, {result['replicas']} copies")
    if code != 0 or result["assignments"] != reference["assignments"]:
        fail("the assignments differ from the fault-free run's:\n" + out[-3000:])
    if result["lost_ranks"] != [1, 5] or result["points_reloaded"] <= 0:
        fail("ranks 1 and 5 were not lost, or no point was loaded from the store")
    print("identical across nodes after a node's ranks were lost together")
    return 0


def slurm(tools, cluster, program):
    code, out = run(cluster + ["slurm-up", "--nodes", "3", "--slots", "2"])
    if code == 77:
        print(out.strip())
        return 77
    if code != 0 or "SLURM_CONF=" not in out:
        fail("Slurm did not start in the test cluster:\n" + out[-3000:])
    os.environ["SLURM_CONF"] = out.split("SLURM_CONF=")[1].split()[0]
    folder = tempfile.mkdtemp(prefix="rampart-slurm-test-", dir=os.getcwd())
    try:
        script = os.path.join(folder, "job.sh")
        with open(script, "w") as f:  # what a user's batch script holds
            f.write("#!/bin/bash\n" + f"exec {os.path.join(tools, 'rampart-run')} \"$@\"\n")
        os.chmod(script, 0o755)
        args = ["-n", "4", "--spares", "1", "--threads", "1", "--json", "--mpiexec-args",
                "--mca btl_tcp_if_include 10.77.0.0/24 --prtemca oob_tcp_if_include 10.77.0.0/24"]

        def batch(name, extra):
            output = os.path.join(folder, name)
            code, said = run(["sbatch", "--wait", "-N", "3", "--ntasks-per-node=2", "-D", folder, "-o", output,
                              script] + args + extra + ["--"] + program)
            text = open(output).read() if os.path.exists(output) else ""
            if code != 0:
                fail(f"sbatch exited {code}: {said}\n{text[-3000:]}")
            return text
        reference = checksum_of(batch("fault-free.txt", []))
        out = batch("killed.txt", ["--kill", "2@iter40"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    r = report_of(out)
    print(f"fault-free {reference}, rank 2 killed {checksum_of(out)}; hosts {r['hosts']}")
    if sorted(set(r["hosts"])) != ["rpnode0", "rpnode1", "rpnode2"]:
        fail(f"the job did not run on the allocation's 3 nodes: {r['hosts']}")
    if checksum_of(out) != reference:
        fail("the result differs from the fault-free run's:\n" + out[-3000:])
    if r["ranks_lost"] != [2] or r["spares_used"] != 1 or r["hosts"][4] == r["hosts"][2]:
        fail(f"rank 2 was not replaced by a spare on another node: lost {r['ranks_lost']}, hosts {r['hosts']}")
    print("identical across nodes under Slurm, rank 2 replaced")
    return 0


def node_restart(rampart_run, cluster, program):
    local = [rampart_run[0], "-n", "6", "--spares", "1", "--threads", "1", "--"] + program
    code, out = run(local)
    reference = checksum_of(out)
    folder = tempfile.mkdtemp(prefix="rampart-cluster-checkpoints-", dir=os.getcwd())
    try:
        # Killed once a checkpoint is complete on disk: every rank's file in one iteration's folder.
        on_disk = lambda: any(len(glob.glob(os.path.join(d, "rank-*.bin"))) == 6
                              for d in glob.glob(os.path.join(folder, "job-*", "checkpoints-0", "iteration-*")))
        code, out = kill_node_once(cluster, rampart_run + ["--checkpoint-dir", folder, "--restart", "-n", "6",
                                                           "--spares", "1", "--threads", "1", "--"] + program, on_disk)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    r = report_of(out)
    restarts = r.get("restarts_after_node_loss", [])
    print(f"fault-free {reference}, node 1 killed {checksum_of(out)}; restarts {restarts}")
    if code != 0 or checksum_of(out) != reference:
        fail("the result differs from the fault-free run's:\n" + out[-3000:])
    if len(restarts) != 1 or restarts[0]["resumed_from_iteration"] is None:
        fail("the job was not started again from a checkpoint on disk")
    if "10.77.0.3" in restarts[0]["hosts_left"] or len(set(r["hosts"])) != 2:
        fail(f"the job started again on {restarts[0]['hosts_left']}, not on the 2 nodes left")
    print("identical across nodes after a restart from disk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
