"""One run of a rampart program's job for rampart-run: mpiexec with its
output shown as it comes, hung processes on this host ended, the notes the
processes leave read back; and, with --restart, the job started again on
the hosts left after the loss of a node."""
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from rampart_death_watch import job_processes
from rampart_launch import end_job
from rampart_hang_watch import stopped


class Echo:
    """Shows the job's output as it comes, each line whole. Until some rank
    has started rampart, a line already shown on the same stream is not
    shown again: every rank of a program that refuses to start says the
    same. (Once one has started, every line passes.)"""

    def __init__(self, reports):
        self.reports, self.started = reports, False

    def pump(self, stream, sink, kept):
        seen = set()
        for line in stream:
            kept.append(line)
            if not self.started:
                self.started = bool(glob.glob(os.path.join(self.reports, "rank.start.*")))
            if not self.started and line.strip():
                if line in seen:
                    continue
                seen.add(line)
            sink.write(line)
            sink.flush()


def read_notes(reports, kind):
    """The JSON notes rank.KIND.* that the processes left."""
    notes = []
    for f in glob.glob(os.path.join(reports, f"rank.{kind}.*")):
        try:
            notes.append(json.loads(Path(f).read_text()))
        except (OSError, ValueError):
            pass  # being written as the job ended
    return notes


def disk_summary(disk, ranks):
    """What the ranks wrote to --checkpoint-dir, summed, and the pace of each
    checkpoint that every rank wrote: its bytes over the time from the first
    rank's start to the last rank's end (they write at once)."""
    out = {key: sum(x[key] for x in disk) for key in ("written", "waited", "wait_seconds", "failed", "bytes", "write_seconds")}
    by_checkpoint = {}  # (checkpoints object, iteration) -> {rank: write}
    for x in disk:
        for iteration, began, ended, size in x.get("writes", []):
            by_checkpoint.setdefault((x.get("object", 0), iteration), {})[x["rank"]] = (began, ended, size)
    rates = [sum(w[2] for w in ws.values()) / max(1e-6, (max(w[1] for w in ws.values()) -
                                                         min(w[0] for w in ws.values())) / 1e6)
             for ws in by_checkpoint.values() if len(ws) == ranks]
    out["checkpoint_bytes_per_second"] = sorted(rates)[len(rates) // 2] if rates else None  # the median
    return out


def run_job(cmd, env, report_prefix, processes, echo, deadline=None, grace=3.0):
    """mpiexec, as subprocess.run would, its output shown by `echo` as it
    comes; stopped when no process has started by `deadline` (a
    rampart_launch.StartDeadline). A stopped process is killed by
    the hang watch, or by the survivors once MPI declares it dead; with
    neither (--no-detect-hangs), or when the others ended first (a program
    that failed), it stays stopped and mpiexec waits for it forever. So
    once every process of the job left on this host is stopped, and has
    been for `grace` seconds (more than the survivors need to kill a hung
    process they know of), they are killed: the hang becomes a crash, and
    the job goes on or ends."""
    # In a session of its own, so that the job can be ended whole (its ranks
    # and launch agents too); Ctrl-C therefore reaches rampart-run alone.
    job = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", start_new_session=True)
    out, err = [], []
    pids, stopped_since, killed = {}, None, []
    try:
        pumps = [threading.Thread(target=echo.pump, args=(job.stdout, sys.stdout, out), daemon=True),
                 threading.Thread(target=echo.pump, args=(job.stderr, sys.stderr, err), daemon=True)]
        for t in pumps:
            t.start()
        while True:
            # Until mpiexec has ended and its output with it: a process that
            # outlives it (stopped, say) holds the output open, and the rule
            # below must go on looking at it.
            for t in pumps:
                t.join(timeout=0.25)
            if job.poll() is not None and not any(t.is_alive() for t in pumps):
                break
            if deadline and job.poll() is None and deadline.passed():
                end_job(job)
            if len(pids) < processes:  # found by their environment once, then only looked at
                pids.update(job_processes(report_prefix))
            left = {rank: pid for rank, pid in pids.items() if os.path.exists(f"/proc/{pid}")}
            if not left or not all(stopped(pid) for pid in left.values()):
                stopped_since = None
                continue
            stopped_since = stopped_since or time.monotonic()
            if time.monotonic() - stopped_since >= grace and not killed:
                killed = kill_job_processes(report_prefix, left)
    except BaseException:  # Ctrl-C, SIGTERM: the job ends with the tool
        end_job(job)
        raise
    if killed:
        note = (f"rampart-run: every other process had ended; rank(s) {', '.join(map(str, killed))}, stopped "
                f"(hung) and never killed by a survivor, kept the job waiting: killed\n")
        sys.stderr.write(note)
        err.append(note)
    return subprocess.CompletedProcess(cmd, job.returncode, "".join(out), "".join(err))


def kill_job_processes(report_prefix, expected):
    """SIGKILLs the job's processes among `expected` (rank -> pid), found
    again by their environment (a pid is never another process's); their ranks."""
    killed = []
    for rank, pid in sorted(job_processes(report_prefix)):
        if expected.get(rank) == pid:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(rank)
            except OSError:
                pass  # ended meanwhile
    return killed


def once_each(text):
    """The lines of `text`, each the first time it comes (blank lines kept)."""
    seen, out = set(), []
    for line in text.splitlines(keepends=True):
        if line.strip() and line in seen:
            continue
        seen.add(line)
        out.append(line)
    return "".join(out)


def newest_complete_checkpoint(folder, ranks):
    """The newest folder DIR/checkpoints-C/iteration-I that holds the file of
    every rank (each is written whole, then renamed: src/store/checkpoint_disk.hpp)."""
    complete = []
    for d in glob.glob(os.path.join(folder, "checkpoints-*", "iteration-*")):
        it = d.rsplit("-", 1)[1]
        if it.isdigit() and all(os.path.exists(os.path.join(d, f"rank-{r}.bin")) for r in range(ranks)):
            complete.append((int(it), d))
    return max(complete)[1] if complete else None


def run_with_restarts(a, prog, launch):
    """One run; with --restart, again on the hosts left after each loss of
    a node (as long as a host is left): a rampart program resumes from the
    checkpoints on disk, a replicated one starts from its beginning (what
    it printed already is not shown again). The report is the last run's,
    with what each restart cost."""
    report, seconds = launch(a, prog)[:2]
    restarts, total = [], seconds
    # A job stopped because it never started is not a loss to start again from.
    while a.restart and report["nodes_lost"] and report["ended"] != "completed" and a.host_list \
            and not report.get("start_failure"):
        ended_us = report["ended_us"]
        lost = lost_hosts(a.host_list, report)
        left = [h for h in a.host_list if h[0] not in lost]
        if not lost or not left:
            print("rampart-run: " + ("no host is left" if lost else f"the lost node(s) {', '.join(report['nodes_lost'])} "
                                     "are none of the hosts given") + ": not started again", file=sys.stderr)
            break
        print(f"rampart-run: starting the job again on {', '.join(h for h, _ in left)} (lost: {', '.join(lost)}), "
              + (f"from the newest checkpoint in {a.checkpoint_job_dir}" if a.checkpoint_dir
                 else "from its beginning"), file=sys.stderr)
        a.host_list, a.kill, a.hang = left, [], []  # the faults ordered have happened
        a.restarted, a.shown_before = True, report.get("shown_lines")
        report, seconds = launch(a, prog)[:2]
        total += seconds
        started = report["first_started_us"]
        restarts.append({"nodes_lost": lost, "hosts_left": [h for h, _ in left],
                         "relaunch_ms": round((started - ended_us) / 1000.0, 1) if started else None,
                         "load_ms": report.get("disk_load_ms"), "resumed_from_iteration": report.get("resumed_from_iteration")})
    if restarts:
        report["restarts_after_node_loss"] = restarts
    return report, total


def restart_lines(report):
    """The report's lines on each start after the loss of a node."""
    return [f"  started again after the loss of {', '.join(x['nodes_lost'])}: on {', '.join(x['hosts_left'])}, "
            f"{x['relaunch_ms']} ms from the end of the job to the program's start, "
            + (f"checkpoint of iteration {x['resumed_from_iteration']} loaded in {x['load_ms']} ms"
               if x["resumed_from_iteration"] is not None else "from its beginning")
            for x in report.get("restarts_after_node_loss", [])]


def lost_hosts(hosts, report):
    """The entries of `hosts` that the launcher's lost node names stand for:
    the same name, or the host the processes placed there said they ran on."""
    names = {h for h, _ in hosts}
    lost = set()
    for name in report["nodes_lost"]:
        if name in names:
            lost.add(name)
        for process, host in enumerate(report["hosts"] or []):
            if report.get("process_hosts", {}).get(str(process)) == name:
                lost.add(host)
    return sorted(lost)
