"""A plain mpi4py program: no rampart import, nothing to change. Run it with
  tools/rampart-run -n 4 --replicas 2 -- .venv/bin/python apps/examples/replicated_mpi4py.py
and every rank runs twice; kill one copy of a rank (--kill 1.0@send40) and
the other goes on alone: the printed checksum stays the native one.
"""
import hashlib
import math
import struct

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

# Each rank owns a stretch of a rod; heat flows between neighbours (pickled
# Python objects), and the total is agreed on every step (a pickle-based
# collective). Buffers work the same: see the last Allreduce.
points = 200
u = [math.sin(0.01 * (rank * points + i)) for i in range(points)]
left, right = (rank - 1) % size, (rank + 1) % size
for step in range(60):
    from_left = comm.sendrecv({"step": step, "edge": u[-1]}, dest=right, source=left)
    from_right = comm.sendrecv({"step": step, "edge": u[0]}, dest=left, source=right)
    padded = [from_left["edge"]] + u + [from_right["edge"]]
    u = [padded[i] + 0.2 * (padded[i - 1] - 2 * padded[i] + padded[i + 1]) for i in range(1, points + 1)]
    energy = comm.allreduce(sum(x * x for x in u), op=MPI.SUM)

# The same sum through the buffer interface (array.array: no NumPy needed).
from array import array
mine, total = array("d", [sum(u)]), array("d", [0.0])
comm.Allreduce(mine, total, op=MPI.SUM)
if rank == 0:
    digest = hashlib.sha256(struct.pack("<dd", energy, total[0])).hexdigest()[:16]
    print(f"result energy {energy:.15g} sum {total[0]:.15g} checksum {digest}")
