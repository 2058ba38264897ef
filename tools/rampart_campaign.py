"""Fault campaigns of rampart-run (--campaign N): the program runs once
without faults, then N times with random kills and/or soft errors, and each
result is compared with the fault-free one. rampart-run imports this module;
one run is rampart-run's own launch(), given an executor that ends runs that
hang.

The campaign is drawn from --seed alone: ranks, kinds of kill, iterations,
fractions of the time window and the soft errors' seeds. Only the seconds of
time kills scale with the measured fault-free run (fix them with --window).
"""
import argparse
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time

from rampart_launch import GRACE, end_session

KINDS = ("time", "iter", "recovery", "end")
OUTCOMES = ("identical", "different", "hang", "error")
# Without --compare and without a "checksum", the whole result is compared
# except what changes from run to run in a correct program: times, and the
# counts of the faults injected and handled (and of the ranks lost to them).
RUN_DEPENDENT = {"faults_injected", "replays", "votes_lost", "corrections", "corrections_applied",
                 "validations_failed", "recoveries", "lost_ranks", "points_reloaded"}
REFERENCE_TIMEOUT = 600.0  # the fault-free run's limit without --timeout


def add_arguments(p):
    # Wrapped by hand: rampart-run's help keeps descriptions as written.
    g = p.add_argument_group("fault campaigns", """\
  rampart-run -n 4 --spares 1 --campaign 20 --kill-random 1 --seed 7 -- prog --json
runs the program once without faults (the reference), then N times with
faults; compares every result with the reference; prints one row per run, a
summary and, for every run that was not identical, the rampart-run command
that reproduces it. --error-rate applies to the N runs, each with a seed of
its own; --seed seeds the whole campaign. Exit code 0 only if every run was
identical (1 otherwise, 2 if the fault-free run failed).""")
    g.add_argument("--campaign", type=int, metavar="N", help="run N faulty runs after a fault-free one")
    g.add_argument("--kill-random", type=int, default=0, metavar="K",
                   help="kill K random ranks in every run (default 0); a rank drawn twice loses its replacement too")
    g.add_argument("--kill-at", default="time,iter", metavar="KINDS",
                   help="the kinds of kill to draw from, comma-separated: time (a moment within the fault-free "
                        "run), iter (an iteration it reported), recovery, end; default time,iter (time alone for "
                        "programs that report no iterations)")
    g.add_argument("--compare", action="append", default=[], metavar="FIELD",
                   help="compare this field of the program's JSON result (repeatable); default: checksum if the "
                        "result has one, else the whole result but times and fault counts")
    g.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="a run that has not ended after SECONDS is a hang and is killed; default max(10, 5 x the "
                        "fault-free run's seconds)")
    g.add_argument("--window", type=float, metavar="SECONDS",
                   help="time kills fall within this many seconds after a rank starts; default the ranks' "
                        "lifetime in the fault-free run")


def check_arguments(p, a):
    if a.campaign is None:
        if a.kill_random or a.compare or a.timeout is not None or a.window is not None or a.kill_at != "time,iter":
            p.error("--kill-random, --kill-at, --compare, --timeout and --window go with --campaign N")
        return
    if a.campaign < 1:
        p.error("--campaign must be at least 1")
    if a.kill or a.hang:
        p.error("--campaign draws its own kills (--kill-random K); --kill and --hang are for a single run")
    if a.kill_random < 0:
        p.error("--kill-random must not be negative")
    kinds = a.kill_at.split(",")
    if not all(k in KINDS for k in kinds):
        p.error(f"--kill-at {a.kill_at}: expected kinds among {', '.join(KINDS)}")
    if a.timeout is not None and a.timeout <= 0 or a.window is not None and a.window <= 0:
        p.error("--timeout and --window must be positive")


class LimitedExecutor:
    """Starts mpiexec in a session of its own and ends the whole session when
    the run has not ended after `timeout` seconds; keeps the output to itself
    and notes when mpiexec ended (wall clock) and whether it hung."""

    def __init__(self, timeout):
        self.timeout, self.hung, self.ended, self.stderr = timeout, False, None, ""

    def __call__(self, cmd, env):
        self.hung = False
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.hung = True
            end_session(proc.pid)
            out, err = proc.communicate(timeout=GRACE)  # every writer has ended, so the pipes close
        except BaseException:
            end_session(proc.pid)  # interrupted: leave nothing running
            raise
        self.ended = time.time()
        end_session(proc.pid)  # ranks that outlived mpiexec
        self.stderr = err
        return subprocess.CompletedProcess(cmd, None if self.hung else proc.returncode, out, err)


def launch_limited(launch, a, prog, timeout):
    """One run through rampart-run's launch(): (report, seconds, ranks, executor)."""
    ex = LimitedExecutor(timeout)
    report, seconds, ranks = launch(a, prog, execute=ex)
    return report, seconds, ranks, ex


def with_options(a, **changes):
    return argparse.Namespace(**{**vars(a), **changes})


def reference_run(a, prog, launch):
    """The fault-free run: its result, seconds, the window of time kills and
    the last iteration each rank reported; or a string saying why not."""
    report, seconds, ranks, ex = launch_limited(launch, with_options(a, kill=[], error_rate=0.0), prog,
                                                a.timeout or REFERENCE_TIMEOUT)
    if ex.hung:
        return f"the fault-free run did not end within {a.timeout or REFERENCE_TIMEOUT:g} s"
    if report["exit_code"] != 0 or "result" not in report:
        why = (f"exit code {report['exit_code']}" if report["exit_code"] != 0
               else "no JSON result (was --json given to the program?)")
        return f"the fault-free run failed: {why}{last_words(ex.stderr)}"
    # Time kills count from a rank's start, so the window is the ranks'
    # lifetime, without the launcher's start-up.
    starts = [r["started_us"] / 1e6 for r in ranks.values() if "started_us" in r]
    window = a.window or (ex.ended - min(starts) if starts and ex.ended > min(starts) else seconds)
    iterations = {r["rank"]: r["iteration"] for r in ranks.values() if r.get("iteration")}
    return argparse.Namespace(result=report["result"], seconds=seconds, window=window, iterations=iterations)


def last_words(stderr):
    """The line of a failed run's stderr most likely to say why, or ''."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip() and "NBC_Progress" not in x]
    said = [x for x in lines if re.search(r"error|fail|abort|terminat|what\(\)", x, re.I)] or lines
    if not said:
        return ""
    # Nested errors put their first cause last.
    return f": {said[-1]}" if len(said[-1]) <= 160 else f": ...{said[-1][-150:]}"


def compared_fields(compare, result):
    """The fields of the result to compare, or a string saying why none."""
    if compare:
        missing = [f for f in compare if f not in result]
        return f"--compare: the fault-free result has no {', '.join(missing)}" if missing else compare
    if "checksum" in result:
        return ["checksum"]
    fields = sorted(k for k in result if k not in RUN_DEPENDENT and "seconds" not in k and "time" not in k)
    return fields or "the fault-free result has no field to compare (see --compare)"


def draw_kill(rng, n, kinds, ref):
    """One kill: a random rank, kind and moment; the same draws whatever the
    kind, so that the rest of the campaign does not depend on it."""
    rank, kind, frac = rng.randrange(n), rng.choice(kinds), rng.random()
    if kind == "time":
        return f"{rank}@{max(frac * ref.window, 0.001):.3f}s"
    if kind == "iter":
        last = ref.iterations.get(rank, max(ref.iterations.values()))
        return f"{rank}@iter{min(int(frac * (last + 1)), last)}"
    return f"{rank}@{kind}"


def usable_kinds(a, ref):
    """--kill-at without iteration kills when the program reports none."""
    return [k for k in a.kill_at.split(",") if k != "iter" or ref.iterations]


def plan_runs(a, ref):
    """Every run's kills and soft errors' seed, drawn from --seed alone."""
    rng = random.Random(a.seed)
    kinds = usable_kinds(a, ref)
    plans = []
    for _ in range(a.campaign):
        kills = [draw_kill(rng, a.n, kinds, ref) for _ in range(a.kill_random)]
        plans.append({"kills": kills, "seed": rng.randrange(1, 1000000)})
    return plans


def classify(report, ex, ref, fields):
    """identical, different, hang or error, and why."""
    if ex.hung:
        return "hang", f"no end within {ex.timeout:g} s, killed"
    if report["exit_code"] != 0:
        unreplaced = ", ".join(map(str, sorted({r for x in report["recoveries"] for r in x["lost"]})))
        if unreplaced:
            return "error", f"exit code {report['exit_code']}, no spare left for rank(s) {unreplaced}"
        return "error", f"exit code {report['exit_code']}{last_words(ex.stderr)}"
    result = report.get("result")
    if result is None:
        return "error", "no JSON result"
    show = lambda v: json.dumps(v)[:40]
    diffs = [f"{f} {show(result.get(f))} instead of {show(ref.result[f])}"
             for f in fields if f not in result or result[f] != ref.result[f]]
    return ("different", "; ".join(diffs)) if diffs else ("identical", "")


def command_line(a, prog, kills, seed):
    """The plain rampart-run command of one run."""
    cmd = [sys.argv[0], "-n", str(a.n)]
    cmd += ["--spares", str(a.spares)] if a.spares else []
    cmd += ["--threads", str(a.threads)] if a.threads else []
    cmd += ["--detect-hangs"] if a.detect_hangs else []
    cmd += ["--no-detect-hangs"] if a.no_detect_hangs else []
    cmd += ["--hang-timeout", f"{a.hang_timeout:g}"] if not a.no_detect_hangs and a.hang_timeout != 0.4 else []
    cmd += ["--ranks-per-node", str(a.ranks_per_node)] if a.ranks_per_node else []
    cmd += ["--mpiexec", a.mpiexec] if a.mpiexec else []
    for k in kills:
        cmd += ["--kill", k]
    cmd += ["--error-rate", repr(a.error_rate), "--seed", str(seed)] if a.error_rate > 0 else []
    return shlex.join(cmd + ["--"] + prog)


def one_run(a, prog, launch, number, plan, ref, fields, timeout):
    opts = with_options(a, kill=plan["kills"], seed=plan["seed"])
    report, seconds, _, ex = launch_limited(launch, opts, prog, timeout)
    outcome, why = classify(report, ex, ref, fields)
    row = {"run": number, "kills": plan["kills"], "kills_fired": len(report["ranks_lost"]),
           "error_rate": a.error_rate, "seed": plan["seed"] if a.error_rate > 0 else None,
           "outcome": outcome, "why": why, "seconds": round(seconds, 3), "exit_code": report["exit_code"],
           "command": command_line(a, prog, plan["kills"], plan["seed"])}
    if outcome != "identical":  # what it said, for runs that may not fail the same way again
        row["stderr_tail"] = [x for x in ex.stderr.splitlines() if x.strip() and "NBC_Progress" not in x][-30:]
        row["recoveries"] = report["recoveries"]
    return row


def print_header(a, prog, ref, fields, timeout):
    what = f"{a.kill_random} random kill(s)" if a.kill_random else "no kills"
    what += f", soft errors at rate {a.error_rate:g}" if a.error_rate > 0 else ""
    runs = f"{a.campaign} run{'s' if a.campaign != 1 else ''}"
    print(f"rampart-run campaign: {runs} of {os.path.basename(prog[0])} on {a.n} ranks + {a.spares} spares, "
          f"{what} each, seed {a.seed}")
    shown = f"checksum {ref.result['checksum']}" if fields == ["checksum"] else f"compared: {', '.join(fields)}"
    print(f"fault-free run: {ref.seconds:.2f} s, {shown}; time kills within {ref.window:.3f} s, "
          f"iterations {'up to ' + str(max(ref.iterations.values())) if ref.iterations else 'not reported'}; "
          f"a run is a hang after {timeout:g} s")
    if a.kill_random > a.spares:
        print(f"note: {a.kill_random} kills and {a.spares} spares: a run whose kills all take effect has no spare "
              f"left and is expected to end in error, unless the program carries on without the dead ranks")
    print(f"{'run':>4}  {'kills':<{kills_width(a)}}  {'fired':<5}  {'soft errors':<20}  {'outcome':<9}  seconds")
    sys.stdout.flush()


def kills_width(a):
    return max(5, 15 * a.kill_random)


def print_row(a, row):
    soft = f"{row['error_rate']:g}, seed {row['seed']}" if row["seed"] is not None else "-"
    kills = ", ".join(row["kills"]) or "-"
    fired = f"{row['kills_fired']}/{len(row['kills'])}"
    print(f"{row['run']:>4}  {kills:<{kills_width(a)}}  {fired:<5}  {soft:<20}  "
          f"{row['outcome']:<9}  {row['seconds']:7.2f}", flush=True)


def summarize(rows):
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    ended = [r["seconds"] for r in rows if r["outcome"] != "hang"]
    return counts, (round(statistics.median(ended), 3) if ended else None)


def print_summary(rows, ref):
    counts, median = summarize(rows)
    fired = sum(r["kills_fired"] for r in rows)
    planned = sum(len(r["kills"]) for r in rows)
    print(f"summary: {len(rows)} run{'s' if len(rows) != 1 else ''}: " + ", ".join(f"{counts[o]} {o}" for o in OUTCOMES)
          + f"; median {'-' if median is None else f'{median:.2f} s'} (fault-free {ref.seconds:.2f} s); "
          f"kills that took effect: {fired} of {planned}")
    bad = [r for r in rows if r["outcome"] != "identical"]
    if bad:
        print("runs not identical, each reproduced by:")
    for r in bad:
        print(f"  run {r['run']} ({r['outcome']}: {r['why']}):\n    {r['command']}")
    sys.stdout.flush()


def campaign_json(a, ref, fields, timeout, rows):
    counts, median = summarize(rows)
    return {"campaign": a.campaign, "ranks": a.n, "spares": a.spares, "kill_random": a.kill_random,
            "kill_at": a.kill_at.split(","), "error_rate": a.error_rate, "seed": a.seed, "compare": fields,
            "timeout": timeout, "window": round(ref.window, 3),
            "reference": {"seconds": round(ref.seconds, 3), "result": {f: ref.result[f] for f in fields}},
            "runs": rows, "counts": counts, "median_seconds": median,
            "all_identical": counts["identical"] == len(rows)}


def run_campaign(a, prog, launch):
    """The whole campaign; returns rampart-run's exit code."""
    try:
        ref = reference_run(a, prog, launch)
        fields = ref if isinstance(ref, str) else compared_fields(a.compare, ref.result)
        if isinstance(fields, str):
            print(f"rampart-run campaign: {fields}; no campaign", file=sys.stderr)
            return 2
        if a.kill_random and not usable_kinds(a, ref):
            print("rampart-run campaign: --kill-at iter, but the program reports no iterations", file=sys.stderr)
            return 2
        timeout = a.timeout or round(max(10.0, 5 * ref.seconds), 1)
        print_header(a, prog, ref, fields, timeout)
        rows = []
        for number, plan in enumerate(plan_runs(a, ref), 1):
            rows.append(one_run(a, prog, launch, number, plan, ref, fields, timeout))
            print_row(a, rows[-1])
    except KeyboardInterrupt:
        print("rampart-run campaign: interrupted", file=sys.stderr)
        return 130
    print_summary(rows, ref)
    if a.json:
        print(json.dumps(campaign_json(a, ref, fields, timeout, rows)))
    return 0 if all(r["outcome"] == "identical" for r in rows) else 1
