"""Finds hung processes of a job on this host and kills them, so that the
job recovers from them as from a crash. A hung process here is a stopped
one (SIGSTOP, state T): it can never go on by itself, and a loaded machine
never puts a process in that state, so the watch gives no false alarms
however busy the cores are. Once killed, MPI's launcher reports its death to
the others within milliseconds, where a stopped process would have kept
them waiting forever. A process stopped by a debugger (state t) is left
alone.

The processes are found by the report path in their environment (what
rampart-run gives one job), once each, looked for every second until all
are found; then only their states are read, every 0.1 s."""
import os
import signal
import threading
import time
from pathlib import Path

from rampart_death_watch import job_processes

LOOK = 0.1  # seconds between looks at the processes' states
FIND = 1.0  # seconds between looks for new processes


def stopped(pid):
    """Whether the process is stopped by a signal (not by a debugger)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


class HangWatch:
    """Kills a process of the job stopped for `timeout` seconds; `killed`
    lists {process, pid, stopped_for_s, killed_us} of each."""

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
        pids, since, found_at = {}, {}, 0.0
        while not self._stop.wait(LOOK):
            now = time.monotonic()
            if len(pids) + len(self.killed) < self.processes and now - found_at >= FIND:
                pids.update((process, pid) for process, pid in job_processes(self.prefix)
                            if not any(k["process"] == process for k in self.killed))
                found_at = now
            for process, pid in list(pids.items()):
                if not stopped(pid):
                    since.pop(pid, None)
                    continue
                since.setdefault(pid, now)
                if now - since[pid] >= self.timeout and self._kill(process, pid):
                    self.killed.append({"process": process, "pid": pid, "stopped_for_s": round(now - since[pid], 3),
                                        "killed_us": round(time.time() * 1e6)})
                    del pids[process]

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
