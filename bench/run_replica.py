#!/usr/bin/env python3
"""Measures process replication (rampart-run --replicas) against its fair
baseline on one machine, the same program run natively twice at the same
time (two independent jobs of n processes, so that both use R x n processes
on the same cores), and writes bench/results/replica.json; then calls
plot_replica.py for bench/results/replica_pingpong.png.

- ping-pong latency and bandwidth, 1 B to 4 MiB (R = 2, 2 ranks), against
  the native jobs each told it has one slot, so that MPI yields the core
  when it finds nothing, as in the replicated job (polling without
  yielding, two native pairs on 2 cores wait for the scheduler); as
  launched (part pingpong), and with every job's sweep starting at one
  wall-clock instant (part pingpong_together): each small size lasts a few
  milliseconds, and two native jobs launched milliseconds apart otherwise
  measure their small sizes while the other job is not yet running;
- the protocol's own cost (part protocol_cost): ping-pong latency (1-64 B)
  and bandwidth (64 KiB up) natively and with one replica, 2 processes on
  2 cores, where no process waits for a core;
- where the small-message latency goes (part latency_parts): one native
  job, the library with one replica, native twice in MPI's yielding mode,
  replicated;
- CG (NAS class A's order, 14000 rows, 15 x 25 iterations) and 2-D Jacobi
  (1024 x 1024, 500 sweeps) on 4 ranks: the programs' own time (rank 0),
  for a replicated run that of its slowest replica (the time printed, by
  the replica ahead, plus how far apart the replicas ended);
- one replica killed in the middle of CG: the extra time, and the time MPI
  took to tell a survivor;
- silent corruption: runs with --flip-bits until at least --flips flips were
  injected, at R = 2 (each must stop the job, reported) and R = 3 (each must be
  outvoted, the output identical), and fault-free runs (no false alarm);
- re-created replicas (part recreate): a ring heat program that names its
  state, fault-free without and with a spare, and with a replica killed and
  re-created by the spare: the time from the spare's first question to the
  state in place, and the runs' wall times.

Runs of the native pair and the replicated job alternate, so that a drift of
the machine affects both alike; medians are recorded.

usage: bench/run_replica.py [build-dir] [--repeat 5] [--flips 1000]
                            [--only pingpong,pingpong_together,latency_parts,protocol_cost,apps,kill,
                                    corruption,recreate]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

here = Path(__file__).resolve().parent
root = here.parent
results = here / "results"
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpiexec(build):
    venv = root / ".venv" / "bin" / "mpiexec"
    return str(venv) if venv.exists() else "mpiexec"


def json_lines(text):
    """The lines of a job's output that are JSON objects."""
    return [line for line in text.splitlines() if line.startswith("{")]


def last_json(text):
    lines = json_lines(text)
    if not lines:
        raise RuntimeError("no JSON in: " + text[-500:])
    return json.loads(lines[-1])


def together(cmd, program, jobs=2, line=-1):
    """Jobs started together; the JSON object each printed at `line` among
    its JSON lines (the last: a native program's result; the one before: a
    program's result under rampart-run, whose report comes last). Open
    MPI's launcher now and then fails to start a job (no output): the jobs
    are started again."""
    for attempt in range(3):
        running = [subprocess.Popen(cmd + program, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, errors="replace") for _ in range(jobs)]
        outputs = [j.communicate(timeout=600) for j in running]
        started = all(len(json_lines(out)) >= -line for out, _ in outputs)
        if started or attempt == 2:
            break
    for (out, err), job in zip(outputs, running):
        if job.returncode != 0 or len(json_lines(out)) < -line:
            raise RuntimeError(f"job failed (exit {job.returncode}): {' '.join(cmd + program)}\n{err[-3000:]}")
    return [json.loads(json_lines(out)[line]) for out, _ in outputs]


def native_twice(build, n, program, yielding=False):
    """Two native jobs started together; their results. `yielding`: each
    job told it has one slot, so that MPI yields the core whenever it finds
    nothing (as in the replicated job, which has more processes than
    cores). Without it, four processes that poll without yielding share 2
    cores: a ping-pong then waits for the scheduler, not for MPI (two native
    pairs took 19-239 s for a 5 s sweep), a baseline that means nothing."""
    hosts = ["--host", "localhost:1"] if yielding else []
    return together([mpiexec(build), "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp"] + hosts +
                    ["-n", str(n)], program)


def replicated(build, n, replicas, program, options=()):
    """One replicated job: (the program's result, rampart-run's report, exit code)."""
    cmd = [str(root / "tools" / "rampart-run"), "-n", str(n), "--replicas", str(replicas), "--json",
           "--replica-lib", str(build / "src" / "replica" / "librampart_replica.so"), *options, "--"] + program
    p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600,
                       errors="replace")
    lines = json_lines(p.stdout)
    if not lines:
        raise RuntimeError(f"rampart-run printed no report (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
    result = json.loads(lines[-2]) if len(lines) >= 2 else None
    return result, json.loads(lines[-1]), p.returncode


def job_seconds(result, report):
    """The program's time on its slowest replica, at most: the time printed
    (by the replica of rank 0 that printed first) plus the largest gap over
    the ranks between their replicas' calls of MPI_Finalize."""
    return result["seconds"] + report["replicas_apart_ms"] / 1000.0


def pingpong(build, repeat, at_once=False):
    program = [str(build / "apps/mpi/rampart-mpi-pingpong"), "--json"]
    # Launching takes well under 2 s on this machine.
    start_at = lambda: ["--start-at", f"{time.time() + 2.0:.3f}"] if at_once else []
    native, repl = {}, {}
    for r in range(repeat):
        for job in native_twice(build, 2, program + start_at(), yielding=True):
            for row in job["sizes"]:
                native.setdefault(row["bytes"], []).append(row)
        result, _, _ = replicated(build, 2, 2, program + start_at())
        for row in result["sizes"]:
            repl.setdefault(row["bytes"], []).append(row)
        print(f"  ping-pong run {r + 1}/{repeat}", flush=True)
    rows = []
    for size in sorted(native):
        med = lambda rs, k: statistics.median(x[k] for x in rs)
        row = {"bytes": size,
               "native_twice_yielding_latency_us": med(native[size], "latency_us"),
               "replicated_latency_us": med(repl[size], "latency_us"),
               "native_twice_yielding_bandwidth_mb_s": med(native[size], "bandwidth_mb_s"),
               "replicated_bandwidth_mb_s": med(repl[size], "bandwidth_mb_s")}
        row["latency_ratio"] = row["replicated_latency_us"] / row["native_twice_yielding_latency_us"]
        row["bandwidth_ratio"] = row["replicated_bandwidth_mb_s"] / row["native_twice_yielding_bandwidth_mb_s"]
        rows.append(row)
        print(f"  {size:>8} B  latency {row['native_twice_yielding_latency_us']:9.2f} / {row['replicated_latency_us']:9.2f} us"
              f"  bandwidth {row['native_twice_yielding_bandwidth_mb_s']:8.1f} / {row['replicated_bandwidth_mb_s']:8.1f} MB/s",
              flush=True)
    return rows


def latency_parts(build, repeat):
    """Where the small-message latency goes: the same ping-pong (1-64 B) as
    one native job (its 2 processes spin), through the library with one
    replica (interposition only, 2 processes), natively twice with each job
    told it has one slot (4 processes that yield the core whenever MPI finds
    nothing, as MPI does in a job with more processes than slots: the
    replicated job's case), and replicated (R = 2, 4 processes)."""
    program = [str(build / "apps/mpi/rampart-mpi-pingpong"), "--json", "--max-bytes", "64"]
    native = [mpiexec(build), "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp", "-n", "2"]
    runs = {"native": [], "replicas_1": [], "native_twice_yielding": [], "replicated": []}
    first = lambda job: statistics.median(r["latency_us"] for r in job["sizes"])
    for r in range(repeat):
        runs["native"].append(first(together(native, program, jobs=1)[0]))
        runs["replicas_1"].append(first(replicated(build, 2, 1, program)[0]))
        runs["native_twice_yielding"].append(statistics.mean(first(job) for job in native_twice(build, 2, program, True)))
        runs["replicated"].append(first(replicated(build, 2, 2, program)[0]))
    out = {"sizes": "1-64 B, the median over the sizes of each run", "runs_us": runs,
           **{f"{k}_us": statistics.median(v) for k, v in runs.items()}}
    print("  latency (us): " + ", ".join(f"{k} {out[k + '_us']:.2f}" for k in runs), flush=True)
    return out


def protocol_cost(build, repeat):
    """The protocol's own cost, where every process has a core: the same
    ping-pong natively and through the library with one replica (2
    processes on 2 cores), runs alternating. Latency: the median over 1-64 B
    of each run; bandwidth: per size from 64 KiB up."""
    program = [str(build / "apps/mpi/rampart-mpi-pingpong"), "--json"]
    native = [mpiexec(build), "--with-ft", "ulfm", "--oversubscribe", "--mca", "btl", "self,sm,tcp", "-n", "2"]
    runs = {"native": [], "replicas_1": []}
    for r in range(repeat):
        runs["native"].append(together(native, program, jobs=1)[0]["sizes"])
        runs["replicas_1"].append(replicated(build, 2, 1, program)[0]["sizes"])
        print(f"  run {r + 1}/{repeat}", flush=True)
    small = lambda sizes: statistics.median(x["latency_us"] for x in sizes if x["bytes"] <= 64)
    latency = {k: [small(run) for run in v] for k, v in runs.items()}
    out = {"latency_sizes": "1-64 B, the median over the sizes of each run",
           "latency_runs_us": latency,
           "native_latency_us": statistics.median(latency["native"]),
           "replicas_1_latency_us": statistics.median(latency["replicas_1"])}
    out["added_latency_us"] = out["replicas_1_latency_us"] - out["native_latency_us"]
    out["bandwidth"] = []
    for size in sorted({x["bytes"] for x in runs["native"][0] if x["bytes"] >= 64 * 1024}):
        med = lambda k: statistics.median(x["bandwidth_mb_s"] for run in runs[k] for x in run if x["bytes"] == size)
        row = {"bytes": size, "native_mb_s": med("native"), "replicas_1_mb_s": med("replicas_1")}
        row["ratio"] = row["replicas_1_mb_s"] / row["native_mb_s"]
        out["bandwidth"].append(row)
    out["lowest_bandwidth_ratio"] = min(row["ratio"] for row in out["bandwidth"])
    print(f"  latency {out['native_latency_us']:.3f} / {out['replicas_1_latency_us']:.3f} us (added"
          f" {out['added_latency_us']:.3f}); bandwidth from 64 KiB at least {out['lowest_bandwidth_ratio']:.3f} x native",
          flush=True)
    return out


def library_twice(build, n, program):
    """Two jobs started together through the library with one replica each:
    the interposed MPI without replication, on the same processes and cores
    as the replicated job. Their mean printed time and their checksums."""
    cmd = [str(root / "tools" / "rampart-run"), "-n", str(n), "--replicas", "1", "--json",
           "--replica-lib", str(build / "src" / "replica" / "librampart_replica.so"), "--"]
    results = together(cmd, program, line=-2)
    return statistics.mean(r["seconds"] for r in results), {r["checksum"] for r in results}


def application(build, name, args, repeat):
    """Native twice against replicated (R = 2), and, to tell the cost of
    interposing MPI from the cost of replication, the program through the
    library with one replica, twice."""
    program = [str(build / "apps/mpi" / f"rampart-mpi-{name}"), "--json", *args]
    native, repl, library, apart, sums = [], [], [], [], set()
    for _ in range(repeat):
        pair = native_twice(build, 4, program)
        native.append(statistics.mean(x["seconds"] for x in pair))
        sums |= {x["checksum"] for x in pair}
        seconds, checksums = library_twice(build, 4, program)
        library.append(seconds)
        sums |= checksums
        result, report, _ = replicated(build, 4, 2, program)
        repl.append(job_seconds(result, report))
        apart.append(report["replicas_apart_ms"])
        sums.add(result["checksum"])
    out = {"program": name, "args": args, "ranks": 4, "replicas": 2,
           "native_twice_seconds": statistics.median(native), "replicated_seconds": statistics.median(repl),
           "library_twice_seconds": statistics.median(library),
           "native_runs": native, "replicated_runs": repl, "library_twice_runs": library,
           "replicas_apart_ms": apart, "checksums_equal": len(sums) == 1}
    out["ratio"] = out["replicated_seconds"] / out["native_twice_seconds"]
    out["interposition_ratio"] = out["library_twice_seconds"] / out["native_twice_seconds"]
    out["replication_ratio"] = out["replicated_seconds"] / out["library_twice_seconds"]
    print(f"  {name}: native twice {out['native_twice_seconds']:.3f} s, through the library twice"
          f" {out['library_twice_seconds']:.3f} s, replicated {out['replicated_seconds']:.3f} s, ratio"
          f" {out['ratio']:.3f} ({out['interposition_ratio']:.3f} x {out['replication_ratio']:.3f}),"
          f" same checksum: {out['checksums_equal']}", flush=True)
    return out


def kill_in_the_middle(build, repeat):
    program = [str(build / "apps/mpi/rampart-mpi-cg"), "--json"]
    free, faulty, detect, resent, sums = [], [], [], [], set()
    for _ in range(repeat):
        result, report, _ = replicated(build, 4, 2, program)
        free.append(job_seconds(result, report))
        sums.add(result["checksum"])
        half = max(0.05, result["seconds"] / 2)
        result, report, code = replicated(build, 4, 2, program, ["--kill", f"1.0@{half:.3f}s"])
        if code != 0 or not report["processes_killed"]:
            raise RuntimeError(f"the killed run failed or killed nothing: {report}")
        faulty.append(job_seconds(result, report))
        detect += report["detect_ms"]
        resent.append(report["messages_resent"])
        sums.add(result["checksum"])
    out = {"program": "cg", "ranks": 4, "replicas": 2, "killed": "replica 0 of rank 1, half-way",
           "fault_free_seconds": statistics.median(free), "killed_seconds": statistics.median(faulty),
           "detect_ms": statistics.median(detect), "messages_resent": statistics.median(resent),
           "fault_free_runs": free, "killed_runs": faulty, "detect_runs_ms": detect, "checksums_equal": len(sums) == 1}
    out["extra_ms"] = (out["killed_seconds"] - out["fault_free_seconds"]) * 1000
    print(f"  kill half-way: {out['fault_free_seconds']:.3f} -> {out['killed_seconds']:.3f} s "
          f"({out['extra_ms']:+.1f} ms), detection {out['detect_ms']:.1f} ms, same checksum {out['checksums_equal']}",
          flush=True)
    return out


def corruption(build, replicas, flips_wanted, rate):
    """Runs with injected flips until flips_wanted were injected."""
    program = [str(build / "apps/mpi/rampart-mpi-jacobi2d"), "--json", "--size", "64", "--iterations", "200"]
    reference, _, _ = replicated(build, 4, replicas, program)
    runs = flips = handled = wrong = 0
    seed = 1
    while flips < flips_wanted:
        result, report, code = replicated(build, 4, replicas, program, ["--flip-bits", str(rate), "--seed", str(seed)])
        seed += 1
        runs += 1
        flips += report["bits_flipped"]
        if replicas == 2:
            stopped = code == 4 and report["corruptions_detected"] >= 1
            handled += report["bits_flipped"] if stopped else 0
            wrong += 0 if stopped or report["bits_flipped"] == 0 else 1
        else:
            same = code == 0 and result and result["checksum"] == reference["checksum"]
            handled += report["bits_flipped"] if same and report["corruptions_detected"] >= 1 else 0
            wrong += 0 if same else 1
        if runs % 50 == 0:
            print(f"  R = {replicas}: {runs} runs, {flips} flips, {handled} handled, {wrong} wrong", flush=True)
    print(f"  R = {replicas}: {runs} runs, {flips} flips injected, {handled} handled, {wrong} runs wrong", flush=True)
    return {"replicas": replicas, "program": "jacobi2d --size 64 --iterations 200", "ranks": 4, "rate": rate,
            "runs": runs, "flips": flips, "handled": handled, "runs_wrong": wrong}


def recreation(build, repeat):
    program = [str(build / "tests/mpi/replica_recreation"), "2000", "100000"]
    kills = ["--kill", "1.1@send2000", "--kill", "1.0@send8000"]
    runs = {"no_spare": [], "one_spare": [], "recreated": []}
    took_ms, state_bytes, outputs = [], set(), set()
    for _ in range(repeat):
        for name, options in (("no_spare", []), ("one_spare", ["--spares", "1"]),
                              ("recreated", ["--spares", "1", *kills])):
            cmd = [str(root / "tools" / "rampart-run"), "-n", "4", "--replicas", "2", "--json", "--replica-lib",
                   str(build / "src" / "replica" / "librampart_replica.so"), *options, "--"] + program
            p = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
            report = last_json(p.stdout)
            done = [r for r in report["replicas_recreated"] if r["ran_to_end"]]
            if p.returncode != 0 or (name == "recreated" and len(done) != 1):
                raise RuntimeError(f"{name}: exit {p.returncode}, {report['replicas_recreated']}\n{p.stderr[-2000:]}")
            runs[name].append(report["seconds"])
            outputs.add(re.findall(r"checksum ([0-9a-f]{16})", p.stdout)[-1])
            took_ms += [r["ms"] for r in done]
            state_bytes |= {r["state_bytes"] for r in done}
    out = {"program": "replica_recreation 2000 100000 (heat on a ring, 4 ranks, R = 2)",
           "kills": "replica 1 of rank 1 at its 2000th message, then replica 0 of rank 1 at its 8000th",
           "recreation_ms": statistics.median(took_ms), "recreation_runs_ms": took_ms,
           "state_bytes": sorted(state_bytes), "checksums_equal": len(outputs) == 1,
           **{f"{k}_seconds": statistics.median(v) for k, v in runs.items()}, "runs_seconds": runs}
    print(f"  re-creation {out['recreation_ms']:.1f} ms (median of {len(took_ms)}); whole runs: no spare "
          f"{out['no_spare_seconds']:.3f} s, one spare {out['one_spare_seconds']:.3f} s, re-created "
          f"{out['recreated_seconds']:.3f} s; same checksum {out['checksums_equal']}", flush=True)
    return out


def false_alarms(build, runs):
    alarms = 0
    for name, args in (("cg", ["--iterations", "2", "--rows", "4000"]), ("halo-any-source", ["--steps", "500"]),
                       ("jacobi2d", ["--iterations", "100"])):
        for replicas in (2, 3):
            for _ in range(runs):
                _, report, code = replicated(build, 4, replicas, [str(build / "apps/mpi" / f"rampart-mpi-{name}")] + args)
                alarms += report["corruptions_detected"] + (code != 0)
    print(f"  fault-free runs: {runs * 6}, false alarms: {alarms}", flush=True)
    return {"runs": runs * 6, "false_alarms": alarms}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--flips", type=int, default=1000)
    p.add_argument("--only", default="pingpong,pingpong_together,latency_parts,protocol_cost,apps,kill,corruption,"
                                     "recreate",
                   help="the parts to run (comma-separated); the others keep what replica.json holds")
    a = p.parse_args()
    build = Path(a.build).resolve()
    parts = a.only.split(",")
    path = results / "replica.json"
    out = json.loads(path.read_text()) if path.exists() and len(parts) < 8 else {}
    out.setdefault("commands", {})
    save = lambda: (results.mkdir(exist_ok=True), path.write_text(json.dumps(out, indent=1) + "\n"))
    for part in parts:
        out["commands"][part] = f"bench/run_replica.py {a.build} --repeat {a.repeat} --flips {a.flips}"
        out.setdefault("load_before", {})[part] = os.getloadavg()[0]
        if part == "pingpong":
            print("ping-pong, 2 ranks: native twice, yielding / replicated (R = 2)")
            out["pingpong"] = pingpong(build, a.repeat)
        elif part == "pingpong_together":
            print("ping-pong, 2 ranks, every job's sweep started at one instant: native twice, yielding / replicated (R = 2)")
            out["pingpong_together"] = pingpong(build, a.repeat, at_once=True)
        elif part == "latency_parts":
            print("ping-pong latency, 1-64 B: native, one replica, native twice yielding, replicated (R = 2)")
            out["latency_parts"] = latency_parts(build, a.repeat)
        elif part == "protocol_cost":
            print("the protocol's own cost: ping-pong natively / through the library with one replica (2 ranks)")
            out["protocol_cost"] = protocol_cost(build, a.repeat)
        elif part == "recreate":
            print("re-created replicas, 4 ranks, R = 2")
            out["recreate"] = recreation(build, a.repeat)
        elif part == "apps":
            print("applications, 4 ranks")
            out["cg"] = application(build, "cg", [], a.repeat)
            out["jacobi2d"] = application(build, "jacobi2d", ["--size", "1024", "--iterations", "500"], a.repeat)
        elif part == "kill":
            print("one replica killed half-way through CG")
            out["kill"] = kill_in_the_middle(build, a.repeat)
        elif part == "corruption":
            print("silent corruption")
            out["corruption"] = [corruption(build, 2, a.flips, 0.02), corruption(build, 3, a.flips, 0.01)]
            out["false_alarms"] = false_alarms(build, 10)
        save()
    subprocess.run([sys.executable, str(here / "plot_replica.py")], check=False)


if __name__ == "__main__":
    main()
