"""When each process of a replicated job died, whatever killed it: the
launcher does not say, and a process killed from outside (or crashed)
writes nothing. Each process names its pid and host in its start report;
for the processes on this host, a thread waits on a pidfd per process
(Linux 5.3+) and notes the moment it ends. The report then gives, for every
process lost, the time from its death to the first survivor that knew."""
import glob
import json
import os
import select
import socket
import threading
import time
from pathlib import Path


class DeathWatch:
    def __init__(self, reports, processes):
        self.reports, self.processes = reports, processes
        self.ended_us = {}  # process -> when it ended (µs since the epoch)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

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

    def _watch(self):
        fds, poller = {}, select.poll()
        while not self._stop.is_set():
            # Looks for new processes every 20 ms until all have started,
            # then only waits on their ends (no polling of the job's cores).
            if len(fds) < self.processes:
                for p, fd in self._new_pidfds(fds).items():
                    fds[p] = fd
                    if fd is not None:
                        poller.register(fd, select.POLLIN)
            wait_ms = 20 if len(fds) < self.processes else 200
            for fd, _ in poller.poll(wait_ms):
                now = round(time.time() * 1e6)
                p = next(q for q, f in fds.items() if f == fd)
                self.ended_us.setdefault(p, now)
                poller.unregister(fd)
        for fd in fds.values():
            if fd is not None:
                os.close(fd)
