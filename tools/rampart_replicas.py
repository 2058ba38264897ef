"""Process replication under rampart-run (--replicas R): an unmodified MPI
program runs as R replicas of each of its N ranks, N x R processes in all,
with librampart_replica.so preloaded. rampart-run imports this module.

Placement: replica k of rank i is process k*N + i of the job. On one
machine, mpiexec's by-slot mapping; across hosts (rampart_launch), blocks of
consecutive processes per host, which put the replicas of a rank on
different nodes when there are at least R nodes (under Slurm: allocate R
times the nodes one copy of the program needs, and start rampart-run inside
the allocation).

What the program prints appears once per logical rank, while the job runs
(rampart_replica_output.py).

Spares (--spares S): S more processes, after the replicas, wait; when a
replica dies, one re-creates it at the program's next
rampart_replica_sync() (docs/replica.md). Its output before that point is
not shown; its later lines stand for its rank only when no original replica
of the rank ran to the end.
"""
import glob
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import rampart_launch
from rampart_death_watch import DeathWatch
from rampart_hang_watch import HangWatch
from rampart_replica_output import Output
from rampart_run_job import restart_lines

KILL = re.compile(r"^(\d+)\.(\d+)@(start|state|recreate\d*|\d+(\.\d+)?s|send\d+|after\d+)$")


def add_arguments(p):
    g = p.add_argument_group("process replication", """\
  rampart-run -n 4 --replicas 2 [--flip-bits RATE --seed S] -- ./mpi_program args
runs an unmodified MPI program with every rank replicated (docs/replica.md).
--kill then takes RANK.REPLICA@WHEN, WHEN one of start, 1.5s, sendN (as it
starts its N-th message), afterN (just after its N-th message left) recreate[N]
(in the N-th spare to re-create that replica, once it has the state; with --spares) or state (as that
replica, elected survivor, is about to send its state to a spare).""")
    g.add_argument("--replicas", type=int, default=0, metavar="R",
                   help="run R replicas of every rank (RAMPART_REPLICAS); the program needs no change")
    g.add_argument("--flip-bits", type=float, default=0.0, metavar="RATE",
                   help="with --replicas: flip one random bit in this share of the outgoing messages of replica 0 "
                        "(RAMPART_FLIP_BITS), seeded by --seed")
    g.add_argument("--replica-dirs", metavar="DIR",
                   help="with --replicas: replica k >= 1 of every rank works in DIR/replica-k (made here, with links "
                        "to this directory's entries), so that replicas do not write over each other's files; "
                        "replica 0 works here")
    g.add_argument("--replica-lib", metavar="PATH",
                   help="librampart_replica.so (default: RAMPART_REPLICA_LIB, else build/src/replica/ of this "
                        "checkout, else the lib folder of the prefix rampart-run is installed in)")


def check_arguments(p, a):
    if not a.replicas:
        if a.flip_bits or a.replica_dirs:
            p.error("--flip-bits and --replica-dirs need --replicas")
        return
    if not 1 <= a.replicas <= 8:  # the layer's max_replicas (layout.hpp)
        p.error("--replicas must be from 1 to 8")
    if a.threads or a.detect_hangs or a.hang or a.error_rate or a.campaign:
        p.error("--replicas runs a plain MPI program: --threads, --detect-hangs, --hang, --error-rate "
                "and --campaign are for rampart programs")
    if not 0.0 <= a.flip_bits <= 1.0:
        p.error(f"--flip-bits {a.flip_bits}: expected a probability in [0, 1]")
    for k in a.kill:
        m = KILL.match(k)
        if not m:
            p.error(f"--kill {k}: with --replicas, expected RANK.REPLICA@start|SECONDSs|sendN|afterN|recreate[N]|state, e.g. 1.0@send40")
        if int(m.group(1)) >= a.n or int(m.group(2)) >= a.replicas:
            p.error(f"--kill {k}: no replica {m.group(2)} of rank {m.group(1)} among {a.n} ranks x {a.replicas}")
    if a.replica_dirs:
        try:
            make_replica_dirs(a.replica_dirs, a.replicas, dry_run=True)
        except (OSError, ValueError) as e:
            p.error(f"--replica-dirs {a.replica_dirs}: {e}")
    if not find_library(a.replica_lib):
        p.error("librampart_replica.so not found: build the project first, or give --replica-lib")


MARK = ".rampart-replica-dir"


def make_replica_dirs(top, replicas, dry_run=False):
    """DIR/replica-k for k >= 1, each with a link to every entry of the
    working directory: the program finds its input files where it would,
    and the files it makes are its own. A directory made by an earlier run
    (it holds the mark) is made again; any other is left alone."""
    top = Path(top).resolve()
    here = Path.cwd().resolve()
    made = []
    for k in range(1, replicas):
        d = top / f"replica-{k}"
        if d.exists() and not (d / MARK).exists():
            raise ValueError(f"{d} exists and was not made by rampart-run: give another directory")
        made.append(d)
    if dry_run:
        return made
    for d in made:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        (d / MARK).touch()
    # Not linked: DIR itself, the folders that hold it (a link would loop
    # back into it) and the replicas' own folders.
    skip = {top, *top.parents, *(d.resolve() for d in made)}
    for d in made:
        for entry in here.iterdir():
            if entry.resolve() not in skip:
                (d / entry.name).symlink_to(entry)
    return made


def complete_sets(a, processes):
    """The replica sets whose every replica ran the program to its end in
    the process that started it: their files are whole."""
    ended = {p["process"]: p.get("ended") == "normal" and not p.get("recreated") for p in processes.values()}
    return [k for k in range(a.replicas) if all(ended.get(k * a.n + r, False) for r in range(a.n))]


def find_library(explicit):
    here = Path(__file__).resolve().parent
    installed = here.parent.parent.parent  # the prefix, from share/rampart/python
    for c in (explicit, os.environ.get("RAMPART_REPLICA_LIB"),
              here.parent / "build" / "src" / "replica" / "librampart_replica.so",
              installed / "lib" / "librampart_replica.so", *installed.glob("lib/*/librampart_replica.so")):
        if c and Path(c).is_file():
            return str(Path(c).resolve())
    return None


def launch(a, prog):
    """Runs the replicated job once; returns (report, seconds)."""
    reports = rampart_launch.report_dir(a, a.host_list)
    try:
        return run_once(a, prog, reports)
    finally:
        shutil.rmtree(reports, ignore_errors=True)  # also after Ctrl-C


def job_environment(a, reports):
    """The environment of the job's processes."""
    env = rampart_launch.base_environment()
    env["RAMPART_REPORT"] = os.path.join(reports, "rank")
    env["RAMPART_REPLICAS"] = str(a.replicas)
    env["RAMPART_REPLICA_SPARES"] = str(a.spares)
    if "ASAN_OPTIONS" in env:  # a sanitized build: its library is preloaded before the runtime
        env["ASAN_OPTIONS"] += ":verify_asan_link_order=0"
    if a.kill:
        env["RAMPART_KILL"] = ",".join(a.kill)
    if a.replica_dirs:
        make_replica_dirs(a.replica_dirs, a.replicas)
        env["RAMPART_REPLICA_DIRS"] = str(Path(a.replica_dirs).resolve())
    if a.flip_bits:
        env["RAMPART_FLIP_BITS"] = repr(a.flip_bits)
        env["RAMPART_SEED"] = str(a.seed)
    # Python randomizes its string hashes per process, and so the order of
    # a set's elements, and so the bytes of a pickled set: every process of
    # the job gets one seed, drawn for the job, so that replicas agree.
    env.setdefault("PYTHONHASHSEED", str(random.randrange(1, 2**32)))
    # Standard input goes to rank 0, as mpiexec gives it to process 0: to
    # every replica of rank 0, read from a copy (mpiexec gets none). Only a
    # file or a pipe is read, to its end, before the job starts: a terminal
    # or a socket (an ssh session's) might never end.
    mode = os.fstat(0).st_mode
    env["RAMPART_STDIN"] = os.devnull
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        env["RAMPART_STDIN"] = os.path.join(reports, "stdin")
        if not hasattr(a, "stdin_bytes"):  # read once: a job started again gets the same
            a.stdin_bytes = sys.stdin.buffer.read()
        with open(env["RAMPART_STDIN"], "wb") as f:
            f.write(a.stdin_bytes)
    return env


def run_once(a, prog, reports):
    env = job_environment(a, reports)
    cmd, placement = rampart_launch.command(a, a.host_list, a.n * a.replicas, a.spares)
    if placement and (together := rampart_launch.replicas_apart(placement, a.n, a.replicas)):
        print(f"rampart-run: warning: the replicas of rank(s) {', '.join(map(str, together))} share a node (give "
              f"at least {a.replicas} hosts with equal slots): a node's loss takes every replica of them",
              file=sys.stderr)
    cmd += ["--output", "tag", "--stdin", "none"]
    rampart_launch.export(cmd, env, ("RAMPART_REPORT", "RAMPART_REPLICAS", "RAMPART_REPLICA_SPARES", "RAMPART_KILL",
                                     "RAMPART_FLIP_BITS", "RAMPART_SEED", "PYTHONHASHSEED", "RAMPART_STDIN",
                                     "RAMPART_REPLICA_DIRS"))
    # The program's processes only, not the launcher.
    cmd += ["-x", "LD_PRELOAD=" + find_library(a.replica_lib)]
    processes = a.n * a.replicas + a.spares
    cmd += ["-n", str(processes)] + prog
    start = time.monotonic()
    restarts = 0
    for attempt in range(3):
        output = Output(a.n, a.replicas, shown_before=getattr(a, "shown_before", None))
        watch = DeathWatch(reports, processes, all_here=not a.host_list)
        hangs = None if a.no_detect_hangs else HangWatch(env["RAMPART_REPORT"], processes, a.hang_timeout)
        deadline = rampart_launch.StartDeadline(a, os.path.join(reports, "rank.replica.*.json"),
                                                lambda: bool(watch.starting_pids))
        code = run_job(cmd, env, reports, processes, output, watch, deadline)
        ended_us = watch.stop()
        stopped_killed = hangs.stop() if hangs else []
        if deadline.missed:  # the same hosts would keep it waiting again
            break
        # Open MPI's launcher now and then fails before any process starts:
        # nothing of the program ran, so it is started again.
        launcher_failed = code is not None and not glob.glob(os.path.join(reports, "rank.replica.*.json")) and \
            rampart_launch.launcher_failed(output.launcher_text())
        if not (code is None or launcher_failed) or attempt == 2:
            break
        if code is None:  # a process died inside MPI_Init (run_job said which)
            print(f"rampart-run: starting the job again (attempt {attempt + 2})", file=sys.stderr)
        else:
            print(f"rampart-run: the launcher failed to start (attempt {attempt + 1}); starting it again",
                  file=sys.stderr)
        for f in glob.glob(os.path.join(reports, "rank.*")):
            os.remove(f)
        restarts += 1
        time.sleep(1)
    seconds = time.monotonic() - start
    job_ended_us = round(time.time() * 1e6)
    output.finish(recreated_output(reports, a.n * a.replicas))
    if output.diverged:
        print(f"rampart-run: warning: started again, rank {output.diverged[0]} printed a different line "
              f"{output.diverged[1]} than the earlier run had shown: the program is not deterministic, and its "
              "output above mixes both runs", file=sys.stderr)
    report = summarize(a, reports, code if code is not None else 1, seconds, ended_us)
    report["ended_us"] = job_ended_us
    report["restarts"] = restarts
    # Processes found stopped (hung) and killed by rampart-run, whatever stopped them.
    report["stopped_processes_killed"] = sorted(k["process"] for k in stopped_killed)
    report["hosts"] = placement
    report["nodes_lost"] = rampart_launch.nodes_lost(output.launcher_text())
    # None had started within --start-timeout: the job was stopped, for this reason.
    report["start_failure"] = deadline.cause() \
        if deadline.missed else None
    report["output"] = output.text()
    report["shown_lines"] = output.shown_lines  # for a run started again: not shown twice
    return report, seconds


def recreated_output(reports, originals):
    """Spares whose output stands for their rank: those that re-created a
    replica of a rank none of whose original replicas ran to the end."""
    processes, _ = read_reports(reports)
    finished = {p["rank"] for p in processes.values() if p["process"] < originals and p.get("ended") == "normal"}
    return {p["process"]: p["rank"] for p in processes.values()
            if p.get("recreated") and p.get("ended") == "normal" and p["rank"] not in finished}


def run_job(cmd, env, reports, processes, output, watch, deadline, grace=3.0):
    """Runs mpiexec, its output shown by `output` as it comes, and returns
    its exit code; stops it when no process has started by `deadline` (a
    rampart_launch.StartDeadline). The launcher now and then deadlocks after processes
    exited with an error; once every process has ended (its report says
    how, or it was killed) and mpiexec has not returned within `grace`
    seconds, it is stopped and the exit code is the processes' own. A
    process that died inside MPI_Init (`watch`) while the others have not
    started within `grace` seconds leaves them waiting there forever: the
    job is stopped and None returned."""
    job = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace", start_new_session=True)  # ended whole (rampart_launch.end_job)
    reader = threading.Thread(target=output.read, args=(job.stdout,), daemon=True)
    try:
        reader.start()
        code = wait_for_job(job, reports, processes, watch, deadline, grace)
    except BaseException:  # Ctrl-C, SIGTERM: the job ends with the tool
        rampart_launch.end_job(job)
        raise
    reader.join(timeout=5.0)
    return code


def wait_for_job(job, reports, processes, watch, deadline, grace):
    """run_job's watch over a running job: its exit code, or None when it
    was stopped stuck in MPI's start-up."""
    all_ended_at = None
    while True:
        try:
            # Returns within 50 ms of the end; the reports are read at this
            # pace, not faster, so that the launcher takes little from the
            # job's cores.
            return job.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
        if deadline.passed():
            rampart_launch.end_job(job)
            continue
        if stuck := stuck_in_start(watch, reports, processes, grace):
            print(f"rampart-run: process {', '.join(map(str, stuck))} ended during MPI's start-up, where the "
                  f"others wait for it forever; nothing of the program ran", file=sys.stderr)
            rampart_launch.end_job(job)  # the launcher first, which cleans up after itself, then any it left
            return None
        ended, codes = ended_processes(reports)
        if ended < processes:
            continue
        all_ended_at = all_ended_at or time.monotonic()
        if time.monotonic() - all_ended_at > grace:
            job.kill()  # its processes have all ended: nothing is left to ask it to end
            job.wait()
            return max(codes, default=0)


def stuck_in_start(watch, reports, processes, grace):
    """The processes that died before their start reports `grace` seconds
    ago or more (or were never seen running), when some other process has
    not started either; else None."""
    died = {p for p, at in dict(watch.died_starting).items() if time.monotonic() - at >= grace}
    died |= watch.never_seen(3 * grace)  # no evidence but absence: a longer wait
    started = len(glob.glob(os.path.join(reports, "rank.replica.*.json")))
    if not died or started >= processes - len(died):
        return None
    return sorted(died)


def ended_processes(reports):
    """How many processes have ended (a report that says so, or a kill), and
    the exit codes they reported."""
    processes, kills = read_reports(reports)
    killed = {k["process"] for k in kills}
    ended = [p for p in processes.values() if p.get("ended") or p["process"] in killed]
    return len(ended) + len(killed - {p["process"] for p in ended}), [p.get("exit_code", 0) for p in ended]


def read_reports(reports):
    processes, kills = {}, []
    for f in glob.glob(os.path.join(reports, "rank.replica.*.json")):
        try:
            r = json.loads(Path(f).read_text())
            processes[r["process"]] = r
        except (OSError, ValueError, KeyError):
            pass
    for f in glob.glob(os.path.join(reports, "rank.replica.kill.*")):
        try:
            kills.append(json.loads(Path(f).read_text()))
        except (OSError, ValueError):
            pass
    return processes, kills


def summarize(a, reports, mpiexec_code, seconds, ended_us=None):
    """The report: how the job ended, per rank whether a replica ran the
    program to its end, the processes killed on purpose and lost to any cause, the protocol's
    counters summed over the processes."""
    processes, kills = read_reports(reports)
    n = a.n
    finished = sorted({p["rank"] for p in processes.values() if p.get("ended") == "normal"})
    unfinished = [r for r in range(n) if r not in finished]
    code = mpiexec_code if mpiexec_code > 0 else 128 - mpiexec_code if mpiexec_code < 0 else 0
    if code == 0 and unfinished:
        code = 1
    total = lambda key: sum(p.get(key, 0) for p in processes.values())
    corruptions = [c for p in processes.values() for c in p.get("corruptions", [])]
    # From each kill to the first survivor that learnt of it.
    detect_ms = []
    for k in kills:
        seen = [d["seen_us"] for p in processes.values() for d in p.get("deaths", []) if d["process"] == k["process"]]
        if seen:
            detect_ms.append(round((min(seen) - k["killed_us"]) / 1000.0, 2))
    # How far apart the replicas of a rank were when their programs ended
    # (by each node's clock: on several nodes it includes their skew).
    ended_at = {}
    for p in processes.values():
        if p.get("program_ended_us") and p.get("rank", -1) >= 0 and p.get("ended") == "normal":
            ended_at.setdefault(p["rank"], []).append(p["program_ended_us"])
    apart_ms = max((max(t) - min(t) for t in ended_at.values()), default=0) / 1000.0
    # Every process that died, of any cause (killed here, from outside, or
    # a crash): those that a survivor learnt had died; from its death (its
    # end as seen on this host, else the kill's time) to the first survivor
    # that knew. A process that reported its normal end is not lost: across
    # nodes, a survivor still in MPI_Finalize may see it leave as a failure.
    lost = sorted({d["process"] for p in processes.values() for d in p.get("deaths", [])
                   if processes.get(d["process"], {}).get("ended") != "normal"} | {k["process"] for k in kills})
    died_us = {**{k["process"]: k["killed_us"] for k in kills}, **(ended_us or {})}
    lost_detect_ms = {}
    for q in lost:
        seen = [d["seen_us"] for p in processes.values() for d in p.get("deaths", []) if d["process"] == q]
        if seen and q in died_us:
            lost_detect_ms[str(q)] = round(max(0, min(seen) - died_us[q]) / 1000.0, 2)
    return {
        "ranks": n,
        "replicas": a.replicas,
        "exit_code": code,
        "mpiexec_exit_code": mpiexec_code,
        "ended": "completed" if code == 0 else "failed",
        "ranks_unfinished": unfinished,
        "seconds": round(seconds, 3),
        "processes_killed": sorted(k["process"] for k in kills),
        "processes_lost": lost,
        "lost_detect_ms": lost_detect_ms,
        "killed_us": sorted(k["killed_us"] for k in kills),
        "detect_ms": detect_ms,
        # Where each process found itself (a lost node's name, as the launcher gives it, to its host).
        "process_hosts": {str(p["process"]): p.get("host") for p in processes.values()},
        "first_started_us": min((p["started_us"] for p in processes.values() if p.get("started_us")), default=None),
        "replicas_apart_ms": round(apart_ms, 2),
        "messages_sent": total("messages_sent"),
        "acks_sent": total("acks_sent"),
        "messages_resent": total("messages_resent"),
        "duplicates_dropped": total("duplicates_dropped"),
        "bits_flipped": total("bits_flipped"),
        "corruptions_detected": total("corruptions_detected"),
        "corruptions": corruptions,
        "collectives_in_set": total("collectives_in_set"),
        "collectives_pulled": total("collectives_pulled"),
        "spares": a.spares,
        "replicas_recreated": [{"process": p["process"], "rank": p["rank"], "replica": p["replica"],
                                "at_sync": p["recreated"]["sync"], "state_bytes": p["recreated"]["state_bytes"],
                                "ms": round((p["recreated"]["done_us"] - p["recreated"]["began_us"]) / 1000.0, 2),
                                "ran_to_end": p.get("ended") == "normal"}
                               for p in sorted(processes.values(), key=lambda p: p["process"]) if p.get("recreated")],
        "states_sent": total("states_sent"),
        # With --replica-dirs: where each replica set worked, and which
        # sets' files are whole.
        "replica_dirs": {str(k): str(Path(a.replica_dirs).resolve() / f"replica-{k}") if k else os.getcwd()
                         for k in range(a.replicas)} if a.replica_dirs else None,
        "complete_sets": complete_sets(a, processes),
        # Where each process ran (spares: until they re-created a replica).
        "cores": [{"process": p["process"], "rank": p["rank"], "replica": p["replica"], "cores": p.get("cores", [])}
                  for p in sorted(processes.values(), key=lambda p: p["process"])],
    }


def lost_with_times(report):
    times = report["lost_detect_ms"]
    return ", ".join(f"{q} (known {times[str(q)]} ms after)" if str(q) in times else str(q)
                     for q in report["processes_lost"])


def print_report(a, report):
    restarted = f", started {report['restarts'] + 1} times" if report.get("restarts") else ""
    lines = [f"rampart-run: {a.n} ranks x {a.replicas} replicas, exit code {report['exit_code']}, "
             f"{report['seconds']:.2f} s{restarted}",
             f"  processes killed: {', '.join(map(str, report['processes_killed'])) or 'none'}; "
             f"lost (any cause): {lost_with_times(report) or 'none'}; "
             f"messages sent: {report['messages_sent']}, re-sent: {report['messages_resent']}, "
             f"duplicates dropped: {report['duplicates_dropped']}, acknowledgements: {report['acks_sent']}"]
    if report["stopped_processes_killed"]:
        lines.append(f"  process(es) {', '.join(map(str, report['stopped_processes_killed']))} found stopped (hung) "
                     f"for {a.hang_timeout:g} s: killed")
    for r in report["replicas_recreated"]:
        lines.append(f"  replica {r['replica']} of rank {r['rank']} re-created by process {r['process']} at sync "
                     f"{r['at_sync']} in {r['ms']} ms ({r['state_bytes']} bytes of state)")
    if a.replica_dirs:
        whole = report["complete_sets"]
        lines.append("  files: " + (f"whole in {report['replica_dirs'][str(whole[0])]} (replica set {whole[0]})"
                                    if whole else "no replica set ran to its end in full: every set's files lack "
                                                  "what its lost replicas would have written"))
    if a.flip_bits:
        lines.append(f"  bits flipped: {report['bits_flipped']}, corruptions detected: "
                     f"{report['corruptions_detected']}")
    lines += restart_lines(report)
    if report["start_failure"]:
        lines.append("rampart-run: " + report["start_failure"])
    elif report["ranks_unfinished"]:
        lines.append(f"rampart-run: rank(s) {', '.join(map(str, report['ranks_unfinished']))} did not run the program "
                     f"to its end on any replica (mpiexec's exit code {report['mpiexec_exit_code']})")
    print("\n".join(lines), file=sys.stderr)
    rampart_launch.say_nodes_lost(report["nodes_lost"])
    if a.json:
        print(json.dumps({k: v for k, v in report.items() if k not in ("output", "shown_lines")}))
