#!/usr/bin/env python3
"""rampart-run's fault campaigns classify runs as they really ended. A
stand-in program (campaign_program.py) misbehaves for sure whenever faults
are injected, so every outcome is provoked on purpose and none can be reached
by accident; the same program also behaves, so that "identical" is earned.

usage: test_campaign.py RAMPART_RUN
Prints PASS: at the end, or FAIL: and exits 1 at the first wrong answer.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

RUN = sys.argv[1]
PROGRAM = str(Path(__file__).resolve().parent / "campaign_program.py")
LIMIT = 60  # seconds for one campaign of this test, hangs included


def campaign(*options, mode="correct", token="-"):
    """Runs one campaign; returns its exit code, output and JSON summary."""
    cmd = [RUN, "-n", "2", *options, "--json", "--", sys.executable, PROGRAM, mode, token]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=LIMIT)
    print(f"$ {' '.join(cmd)}\n{run.stdout}", flush=True)
    last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    return run.returncode, run.stdout, json.loads(last) if last.startswith("{") else None


def check(what, ok):
    if not ok:
        print(f"FAIL: {what}")
        sys.exit(1)
    print(f"ok: {what}")


def outcomes(summary):
    return [r["outcome"] for r in summary["runs"]]


def living(token):
    """Processes whose command line holds the token (zombies excluded)."""
    found = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path(f"/proc/{d}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in args and state != "Z":
            found.append(int(d))
    return found


def test_identical_and_different():
    code, _, s = campaign("--campaign", "2", "--error-rate", "0.5", "--seed", "4", mode="correct")
    check("a program that ignores the faults: every run identical, exit code 0",
          code == 0 and outcomes(s) == ["identical"] * 2 and s["all_identical"])
    code, out, s = campaign("--campaign", "2", "--error-rate", "0.5", "--seed", "4", mode="wrong")
    check("another checksum under faults: every run different, exit code 1",
          code == 1 and outcomes(s) == ["different"] * 2 and s["counts"]["different"] == 2)
    check("the reproducing command names the run's soft errors",
          all(f"--error-rate 0.5 --seed {r['seed']} --" in r["command"] and r["command"] in out for r in s["runs"]))
    code, _, s = campaign("--campaign", "2", "--error-rate", "0.5", "--compare", "answer", mode="wrong")
    check("--compare answer: the field that stays equal makes the runs identical",
          code == 0 and s["compare"] == ["answer"])
    code, _, s = campaign("--campaign", "2", "--compare", "answer", "--compare", "seconds", mode="correct")
    check("--compare seconds: a field that changes every run makes them different",
          code == 1 and outcomes(s) == ["different"] * 2)


def test_error_and_hang():
    code, _, s = campaign("--campaign", "2", "--kill-random", "1", "--window", "0.5", mode="fail")
    check("non-zero exit under faults: error, exit code 1",
          code == 1 and outcomes(s) == ["error"] * 2 and all(r["exit_code"] == 3 for r in s["runs"]))
    token = f"campaign-hang-{os.getpid()}"
    start = time.monotonic()
    code, _, s = campaign("--campaign", "1", "--error-rate", "0.1", "--timeout", "3", mode="hang", token=token)
    took = time.monotonic() - start
    check(f"a run that never ends: hang after the 3 s timeout (campaign took {took:.1f} s)",
          code == 1 and outcomes(s) == ["hang"] and s["runs"][0]["exit_code"] is None and took < 20)
    check("nothing of the hung run is left running", not living(token))
    code, out, s = campaign("--campaign", "2", mode="broken")
    check("a failing fault-free run: no campaign, exit code 2", code == 2 and s is None and "no campaign" in out)


def test_determinism():
    plan = lambda s: [(r["kills"], r["seed"]) for r in s["runs"]]
    opts = ["--campaign", "3", "--kill-random", "2", "--kill-at", "time,end,recovery", "--window", "2",
            "--error-rate", "0.1"]
    _, _, a = campaign(*opts, "--seed", "11")
    _, _, b = campaign(*opts, "--seed", "11")
    _, _, c = campaign(*opts, "--seed", "12")
    check("the same --seed draws the same campaign", plan(a) == plan(b))
    check("another --seed draws another campaign", plan(a) != plan(c))
    kills = [k for r in a["runs"] for k in r["kills"]]
    check("kills are drawn within the ranks and the window, 2 per run",
          len(kills) == 6 and all(k.split("@")[0] in ("0", "1") for k in kills)
          and all(k.endswith(("@end", "@recovery")) or 0 < float(k.split("@")[1][:-1]) <= 2 for k in kills))


if __name__ == "__main__":
    test_identical_and_different()
    test_error_and_hang()
    test_determinism()
    print("PASS: campaigns classify identical, different, error and hang runs, and replay from --seed")
