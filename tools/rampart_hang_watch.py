"""Finds hung processes of a job on this host and kills them, so that the
job recovers from them as from a crash. A hung process here is a stopped
one (SIGSTOP, state T), as a frozen process is: the job would wait for it
forever. A loaded machine slows processes but never stops them, so load
raises no false alarm; a program whose processes are stopped on purpose
(gang scheduling, a SIGSTOP to wait for a debugger) needs
`rampart-run --no-detect-hangs`. A process stopped by a debugger (state t)
is left alone. Once killed, MPI's launcher reports its death to the others
within milliseconds.

The processes are found by the report path in their environment (what
rampart-run gives one job start), looked for every 0.1 s until the first
is found, then every second until all are; after that only their states
are read, every 0.1 s."""
import math
import os
import signal
import threading
import time
from pathlib import Path

from rampart_death_watch import job_processes

LOOK = 0.1  # seconds between looks at the processes' states
FIND = 1.0  # seconds between looks for the processes not found yet


def stopped(pid):
    """Whether the process is stopped by a signal (not by a debugger)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


class HangWatch:
    """Kills a process of one start of a job that stays stopped for
    `timeout` seconds; `killed` lists {process, pid, killed_us} of each."""

    def __init__(self, report_prefix, processes, timeout):
        self.prefix, self.processes, self.timeout = report_prefix, processes, timeout
        self.killed = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=2.0)
        return list(self.killed)

    def _watch(self):
        pids, done, since = {}, set(), {}  # done: killed, or its pid taken by another process
        found_at, last = -math.inf, time.monotonic()
        while not self._stop.wait(LOOK):
            now = time.monotonic()
            if now - last > 2 * LOOK:
                since.clear()  # this watch was held up itself: what it saw stopped may have gone on since
            last = now
            if len(pids) + len(done) < self.processes and now - found_at >= (FIND if pids else LOOK):
                pids.update((q, pid) for q, pid in job_processes(self.prefix) if q not in done)
                found_at = now
            for process, pid in list(pids.items()):
                if not stopped(pid):
                    since.pop(pid, None)
                    continue
                if now - since.setdefault(pid, now) < self.timeout:
                    continue
                del pids[process]
                done.add(process)
                if self._kill(process, pid):
                    self.killed.append({"process": process, "pid": pid, "killed_us": round(time.time() * 1e6)})

    def _kill(self, process, pid):
        """SIGKILLs the process if it is still the job's (a pid is never
        another process's)."""
        if dict(job_processes(self.prefix)).get(process) != pid:
            return False
        try:
            os.kill(pid, signal.SIGKILL)
            return True
        except OSError:
            return False  # ended meanwhile
