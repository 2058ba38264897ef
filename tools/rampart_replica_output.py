"""What a replicated job prints: each logical rank's lines once, shown while
the job runs. mpiexec tags every line with the process that printed it;
replica k of rank i is process k*N + i, spares come after the replicas.

- With one or two replicas, a rank's next line is shown as soon as any of
  its replicas printed it (they print the same lines: send-determinism).
- With three or more, it is shown once a majority of the rank's replicas
  printed the same text; what is still held when the job ends (a rank that
  lost its majority) is shown then, as merged_lines decides.
- A spare that re-created a replica prints from the program's first
  rampart_replica_sync() on. Its lines stand for its rank only when no
  original replica of the rank ran to the end, which is known when the job
  ends: they are shown then, after the originals' lines, without those that
  repeat the end of the originals' (printed by both). A spare's standard
  error is shown at once.
- The launcher's own (untagged) lines are held until some process printed,
  so that a start that failed and is retried leaves no trace.
- A job started again from its beginning (after the loss of a node) prints
  its lines again: those the earlier run showed (`shown_before`) are not
  shown twice, and a line that differs from the one shown is noted
  (`diverged`).
"""
import re
import sys
import threading
from collections import Counter

TAGGED = re.compile(r"^\[\d+,(\d+)\]<(stdout|stderr)>: ?(.*)$")


class Output:
    def __init__(self, ranks, replicas, out=None, err=None, shown_before=None):
        self.ranks, self.replicas = ranks, replicas
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.lines = {}  # (rank, stream) -> {replica: [lines]}
        self.shown = {}  # (rank, stream) -> how many of its lines are shown
        self.shown_lines = {}  # (rank, stream) -> the lines on screen, the earlier runs' included
        self.before = shown_before or {}  # (rank, stream) -> the lines an earlier run of the job showed
        self.diverged = None  # (rank, line number) where this run first printed otherwise than that one
        self.spares = {}  # spare process -> its standard output lines
        self.untagged = []  # the launcher's lines, until a process printed
        self.launcher = []  # all of the launcher's lines
        self.started = False
        self.stdout_lines = []  # what was shown on standard output
        self.lock = threading.Lock()

    def read(self, stream):
        """Feeds every line of `stream` (mpiexec's output) as it comes."""
        for raw in iter(stream.readline, ""):
            self.feed(raw.rstrip("\n"))

    def feed(self, raw):
        with self.lock:
            m = TAGGED.match(raw)
            if not m:
                self.launcher.append(raw)
                if self.started:
                    self._write("stderr", raw)
                else:
                    self.untagged.append(raw)
                return
            self._start()
            process, stream, line = int(m.group(1)), m.group(2), m.group(3)
            if process >= self.ranks * self.replicas:
                if stream == "stderr":
                    self._write("stderr", line)
                else:
                    self.spares.setdefault(process, []).append(line)
                return
            key = (process % self.ranks, stream)
            self.lines.setdefault(key, {}).setdefault(process // self.ranks, []).append(line)
            self._show_agreed(key)

    def finish(self, recreated):
        """At the job's end: every rank's lines not shown yet. `recreated`
        maps each spare whose output stands for a rank to that rank."""
        with self.lock:
            self._start()
            for process, rank in recreated.items():
                if self.spares.get(process):
                    self.lines.setdefault((rank, "stdout"), {})["spare"] = self.spares[process]
            for key in sorted(self.lines):
                merged, _ = merged_lines(self.lines[key])
                for line in merged[self.shown.get(key, 0):]:
                    self._show(key, line)
                self.shown[key] = max(self.shown.get(key, 0), len(merged))
            # What an earlier run showed and this one did not reach stays shown.
            for key, before in self.before.items():
                mine = self.shown_lines.setdefault(key, [])
                mine += before[len(mine):]
            self.out.flush()
            self.err.flush()

    def text(self):
        """What was shown on standard output."""
        return "".join(line + "\n" for line in self.stdout_lines)

    def launcher_text(self):
        return "\n".join(self.launcher)

    def _start(self):
        if self.started:
            return
        self.started = True
        for line in self.untagged:
            self._write("stderr", line)
        self.untagged = []

    def _show_agreed(self, key):
        by = self.lines[key]
        need = self.replicas // 2 + 1 if self.replicas >= 3 else 1
        while True:
            i = self.shown.get(key, 0)
            versions = Counter(ls[i] for ls in by.values() if len(ls) > i)
            if not versions:
                return
            line, count = versions.most_common(1)[0]
            if count < need:
                return
            self._show(key, line)
            self.shown[key] = i + 1

    def _show(self, key, line):
        """A rank's next line: written, unless an earlier run showed it
        (shown_lines keeps what is on screen)."""
        mine = self.shown_lines.setdefault(key, [])
        before = self.before.get(key, [])
        if len(mine) >= len(before):
            mine.append(line)
            self._write(key[1], line)
            return
        if line != before[len(mine)] and self.diverged is None:
            self.diverged = (key[0], len(mine) + 1)
        mine.append(before[len(mine)])

    def _write(self, stream, line):
        if stream == "stdout":
            self.stdout_lines.append(line)
        target = self.out if stream == "stdout" else self.err
        try:
            target.write(line + "\n")
            target.flush()
        except (BrokenPipeError, ValueError):
            pass  # the reader went away (`| head`): the job's output is still read, or it would block


def merged_lines(by):
    """One rank's lines from its replicas' versions: line L as the majority
    of the replicas that printed an L-th line printed it (the first replica
    to print it when they are fewer than three). A re-created replica's
    lines (by["spare"]) follow, without those that repeat the end of the
    originals'. Returns (lines, where the re-created replica's first line is)."""
    originals = [ls for source, ls in by.items() if source != "spare"]
    merged = []
    for i in range(max(map(len, originals), default=0)):
        versions = [ls[i] for ls in originals if len(ls) > i]
        merged.append(Counter(versions).most_common(1)[0][0] if len(versions) >= 3 else versions[0])
    spare = by.get("spare")
    if spare is None:
        return merged, 0
    overlap = max(k for k in range(min(len(merged), len(spare)) + 1) if merged[len(merged) - k:] == spare[:k])
    return merged + spare[overlap:], len(merged) - overlap
