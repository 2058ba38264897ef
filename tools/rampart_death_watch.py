"""When each process of a replicated job died, whatever killed it: the
launcher does not say, and a process killed from outside (or crashed)
writes nothing. Each process names its pid and host in its start report;
for the processes on this host, a thread waits on a pidfd per process
(Linux 5.3+) and notes the moment it ends. The report then gives, for every
process lost, the time from its death to the first survivor that knew.

It also watches the job's processes on this host before they have started:
found by the report path in their environment, one that ends before its
start report (inside MPI_Init, where Open MPI's other processes then wait
for it forever) is noted in `died_starting`, so that the job can be
started again."""
import glob
import json
import os
import select
import socket
import threading
import time
from pathlib import Path


def job_processes(report_prefix):
    """(rank, pid) of the processes on this host whose environment holds
    RAMPART_REPORT=`report_prefix` (what rampart-run gives one job), the
    launcher's own (without a rank) left out."""
    marker = f"RAMPART_REPORT={report_prefix}".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        rank = next((v[len(b"OMPI_COMM_WORLD_RANK="):] for v in env if v.startswith(b"OMPI_COMM_WORLD_RANK=")), b"")
        if marker in env and rank.isdigit():
            yield int(rank), int(pid)


class DeathWatch:
    def __init__(self, reports, processes, all_here=True):
        self.reports, self.processes, self.all_here = reports, processes, all_here
        self.ended_us = {}  # process -> when it ended (µs since the epoch)
        self.died_starting = {}  # process -> when it ended before its start report (time.monotonic())
        self.starting_pids = {}  # process -> pid, as found before its start report
        self._seen = set()  # processes found running or reported
        self._first_seen = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def never_seen(self, grace):
        """The processes not found `grace` seconds after the first was: the
        launcher starts them all at once, so these died before they could
        be (when all of the job's processes run on this host)."""
        if not self.all_here or self._first_seen is None or time.monotonic() - self._first_seen < grace:
            return set()
        return set(range(self.processes)) - self._seen

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=2.0)
        return dict(self.ended_us)

    def _new_pidfds(self, known):
        """pidfds of the processes on this host that started since the last look."""
        found = {}
        for f in glob.glob(os.path.join(self.reports, "rank.replica.*.json")):
            try:
                r = json.loads(Path(f).read_text())
            except (OSError, ValueError):
                continue
            p = r.get("process")
            if p is None or p in known:
                continue
            if r.get("host") != socket.gethostname() or not r.get("pid"):
                found[p] = None  # on another node: not watched from here
                continue
            try:
                found[p] = os.pidfd_open(r["pid"])
            except (OSError, AttributeError):
                found[p] = None  # ended already, or no pidfds here: its death time stays unknown
        return found

    def _starting(self, known, starting):
        """pidfds of the job's processes on this host that have no start
        report yet and are not watched yet, found by their environment."""
        found = {}
        for rank, pid in job_processes(os.path.join(self.reports, "rank")):
            if rank in known or rank in starting or rank in found:
                continue  # watched already
            try:
                found[rank] = os.pidfd_open(pid)
                self.starting_pids[rank] = pid
            except (OSError, AttributeError):
                pass
        return found

    def _watch(self):
        fds, starting, poller = {}, {}, select.poll()
        while not self._stop.is_set():
            # Looks for new processes every 20 ms until all have started,
            # then only waits on their ends (no polling of the job's cores).
            if len(fds) < self.processes:
                for p, fd in self._new_pidfds(fds).items():
                    if fd is not None and p in starting:  # watched since its start already
                        os.close(fd)
                        fd = None
                    fds[p] = fd
                    if fd is not None:
                        poller.register(fd, select.POLLIN)
                for p, fd in self._starting(fds, starting).items():
                    starting[p] = fd
                    poller.register(fd, select.POLLIN)
                self._seen.update(fds, starting)
                if self._seen and self._first_seen is None:
                    self._first_seen = time.monotonic()
            wait_ms = 20 if len(fds) < self.processes else 200
            for fd, _ in poller.poll(wait_ms):
                now = round(time.time() * 1e6)
                p = next((q for q, f in starting.items() if f == fd), None)
                if p is None:
                    p = next(q for q, f in fds.items() if f == fd)
                elif not os.path.exists(os.path.join(self.reports, f"rank.replica.{p}.json")):
                    self.died_starting.setdefault(p, time.monotonic())
                self.ended_us.setdefault(p, now)
                poller.unregister(fd)
        for fd in list(fds.values()) + list(starting.values()):
            if fd is not None:
                os.close(fd)
