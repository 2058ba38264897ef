#!/usr/bin/env python3
"""rampart-run's output of a replicated job (tools/rampart_replica_output.py):
each rank's lines once, shown as they come; a majority with three replicas;
a re-created replica's lines at the end; the launcher's lines held until a
process printed.

usage: test_replica_output.py TOOLS_DIR
Prints PASS: at the end, or FAIL: and exits 1 at the first wrong answer.
"""
import io
import sys

sys.path.insert(0, sys.argv[1])
from rampart_replica_output import Output  # noqa: E402


def check(what, got, expected):
    if got != expected:
        print(f"FAIL: {what}: got {got!r}, expected {expected!r}")
        sys.exit(1)
    print(f"ok: {what}")


def make(ranks, replicas):
    out, err = io.StringIO(), io.StringIO()
    return Output(ranks, replicas, out, err), out, err


def tag(process, line, stream="stdout"):
    return f"[1,{process}]<{stream}>: {line}"


# Two ranks, two replicas: processes 0, 1 are replica 0; 2, 3 replica 1.
o, out, err = make(2, 2)
o.feed(tag(0, "a"))
check("a line is shown as the first replica prints it", out.getvalue(), "a\n")
o.feed(tag(2, "a"))
check("the other replica's copy is not shown again", out.getvalue(), "a\n")
o.feed(tag(3, "b"))
o.feed(tag(1, "b"))
o.feed(tag(2, "c"))
check("each rank's lines once, as they come", out.getvalue(), "a\nb\nc\n")
o.feed(tag(1, "oops", "stderr"))
o.feed(tag(3, "oops", "stderr"))
check("standard error once too", err.getvalue(), "oops\n")
o.finish({})
check("nothing more at the end", out.getvalue(), "a\nb\nc\n")
check("text() is what was shown", o.text(), "a\nb\nc\n")

# Three replicas of one rank: a line waits for a majority.
o, out, err = make(1, 3)
o.feed(tag(0, "x"))
check("one of three is not a majority", out.getvalue(), "")
o.feed(tag(1, "X!"))
check("two that differ are not a majority", out.getvalue(), "")
o.feed(tag(2, "x"))
check("two of three agree: shown", out.getvalue(), "x\n")
o.feed(tag(0, "y"))
o.finish({})
check("a line held at the end is shown then", out.getvalue(), "x\ny\n")

# A spare (process 2 of 1 rank x 2 replicas) re-created the rank's replica
# and the originals died: its lines after the originals', the overlap once.
o, out, err = make(1, 2)
for line in ("s1", "s2", "s3"):
    o.feed(tag(0, line))
o.feed(tag(2, "s2"))
o.feed(tag(2, "s3"))
o.feed(tag(2, "s4"))
check("a spare's lines wait for the end", out.getvalue(), "s1\ns2\ns3\n")
o.finish({2: 0})
check("then follow the originals' without the overlap", out.getvalue(), "s1\ns2\ns3\ns4\n")

# A spare whose rank's originals ran to the end: its lines are not shown.
o, out, err = make(1, 2)
o.feed(tag(0, "a"))
o.feed(tag(2, "a"))
o.feed(tag(2, "spare-only"))
o.finish({})
check("an unused spare's output is not shown", out.getvalue(), "a\n")

# The launcher's lines: held until a process printed, then on stderr.
o, out, err = make(1, 1)
o.feed("launcher: listener thread failed")
check("held before any process printed", err.getvalue(), "")
check("and readable for a retry", o.launcher_text(), "launcher: listener thread failed")
o.feed(tag(0, "hi"))
check("shown once a process printed", err.getvalue(), "launcher: listener thread failed\n")
o, out, err = make(1, 1)
o.feed("prterun: an error")
o.finish({})
check("shown at the end when no process printed", err.getvalue(), "prterun: an error\n")

# A launcher line after the start is shown, and still read (a lost node's).
o, out, err = make(1, 1)
o.feed(tag(0, "hi"))
o.feed("Remote daemon: [prterun-x@1] on node rpnode1")
check("a later launcher line on stderr", err.getvalue(), "Remote daemon: [prterun-x@1] on node rpnode1\n")
check("and in the launcher's text", "rpnode1" in o.launcher_text(), True)

# A job started again from its beginning: what the first run showed is not
# shown again; the rest is.
o, out, err = make(2, 2)
for process, line in ((0, "r0 a"), (1, "r1 a"), (0, "r0 b")):
    o.feed(tag(process, line))
first = out.getvalue()
o2 = Output(2, 2, io.StringIO(), io.StringIO(), shown_before=o.shown_lines)
out2 = o2.out
for process, line in ((2, "r0 a"), (0, "r0 a"), (1, "r1 a"), (0, "r0 b"), (0, "r0 c"), (3, "r1 a"), (1, "r1 b")):
    o2.feed(tag(process, line))
o2.finish({})
check("the first run showed each rank's first lines", first, "r0 a\nr1 a\nr0 b\n")
check("the second shows only the rest", out2.getvalue(), "r0 c\nr1 b\n")
check("and agreed with the first", o2.diverged, None)
o3 = Output(2, 2, io.StringIO(), io.StringIO(), shown_before=o.shown_lines)
o3.feed(tag(0, "r0 a"))
o3.feed(tag(0, "r0 other"))
check("a line unlike the one shown is noted", o3.diverged, (0, 2))
check("and not shown", o3.out.getvalue(), "")

# Started a third time: what the first run showed and the second did not
# reach is still not shown again.
o4 = Output(2, 2, io.StringIO(), io.StringIO(), shown_before=o.shown_lines)
o4.feed(tag(0, "r0 a"))
o4.finish({})
o5 = Output(2, 2, io.StringIO(), io.StringIO(), shown_before=o4.shown_lines)
for process, line in ((0, "r0 a"), (0, "r0 b"), (0, "r0 c"), (1, "r1 a"), (1, "r1 b")):
    o5.feed(tag(process, line))
o5.finish({})
check("a third run shows only what no run showed", o5.out.getvalue(), "r0 c\nr1 b\n")

print("PASS: replicated output")
