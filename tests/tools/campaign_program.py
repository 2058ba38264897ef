#!/usr/bin/env python3
"""A stand-in program for tests of rampart-run's fault campaigns: started by
mpiexec like a rampart program but without MPI, it misbehaves on purpose
whenever rampart-run injects faults (RAMPART_KILL or RAMPART_ERROR_RATE set),
so each outcome of a campaign can be provoked for sure.

  campaign_program.py MODE [TOKEN]
  MODE: correct   the same result always
        wrong     another checksum under faults
        hang      sleeps forever under faults
        fail      exits with code 3 under faults
        broken    exits with code 3 always (the fault-free run fails)
  TOKEN: ignored; lets a test find its processes among all others
Rank 0 prints the result as one JSON line; "seconds" differs in every run.
Like a rampart program, each rank leaves the notes rampart-run reads
(RAMPART_REPORT): one when it starts, and its report when it ends.
"""
import json
import os
import sys
import time

mode = sys.argv[1]
faults = "RAMPART_KILL" in os.environ or "RAMPART_ERROR_RATE" in os.environ
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
report = os.environ.get("RAMPART_REPORT")


def note(suffix, what):
    if report:
        with open(f"{report}.{suffix}", "w") as f:
            json.dump(what, f)


note(f"start.{rank}", {"process": rank, "pid": os.getpid()})
if mode == "broken" or (mode == "fail" and faults):
    print("campaign_program: failing on purpose", file=sys.stderr)
    sys.exit(3)
if mode == "hang" and faults:
    time.sleep(3600)
note(f"{rank}.json", {"rank": rank, "ended": "normal"})
if rank == 0:
    checksum = "0badc0de" if mode == "wrong" and faults else "600dcafe"
    print(json.dumps({"checksum": checksum, "answer": 42, "seconds": time.time() % 1000}))
