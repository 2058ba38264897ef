"""How rampart-run starts a job, in every mode: the hosts it runs on, where
each process goes, the mpiexec command and the environment the processes
get, and whether a failed start is one of the launcher's own (started
again) or the program's (not).

Hosts come from --hosts, --hostfile or the Slurm allocation rampart-run
runs in; without any, the job runs on this machine as before. Across
several hosts, rampart-run places every process itself (a rank file):

- the program's processes in blocks of consecutive ranks, each host's block
  as large as its share of the slots (neighbouring ranks share a node, and
  with --replicas the replicas of one rank land on different nodes, replica
  k of every rank together);
- the spares one by one on the host with the most free slots, so that they
  spread over the nodes: a node's loss takes at most its own spares with
  the ranks they should replace.
"""
import atexit
import glob
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Open MPI's launcher now and then fails to start a job before any process
# of it runs: its PMIx listener thread, or (seen once in a few starts right
# after a node was lost, with a rank file it took before) a complaint about
# its own mapping options. Nothing of the program ran; a start again works.
LAUNCHER_FAILURES = ("PMIx server's listener thread failed to start",
                     "The PE=<list> mapping directive cannot be combined with a")


def launcher_failed(text):
    """Whether the launcher's output says that it failed to start the job."""
    return any(marker in text for marker in LAUNCHER_FAILURES)


def add_arguments(p):
    g = p.add_argument_group("hosts and launcher")
    where = g.add_mutually_exclusive_group()
    where.add_argument("--hosts", metavar="H1:SLOTS,H2:SLOTS",
                       help="run on these hosts (SLOTS: processes a host takes, default 1); default: the Slurm "
                            "allocation rampart-run runs in, else this machine")
    where.add_argument("--hostfile", metavar="FILE",
                       help="the hosts, one a line: 'HOST', 'HOST:SLOTS' or 'HOST slots=SLOTS' (Open MPI's form)")
    g.add_argument("--launch-agent", metavar="PATH",
                   help="what starts the launcher's daemon on another host, called as ssh is (default: ssh)")
    g.add_argument("--mpiexec-args", default="", metavar="'ARGS'",
                   help="more options for mpiexec, as one string (e.g. \"--mca btl_tcp_if_include ib0\")")
    g.add_argument("--report-dir", metavar="DIR",
                   help="where the processes leave their reports for rampart-run: a folder every host can write "
                        "to (default: a new folder in /tmp on one machine, in the current folder on several hosts)")
    g.add_argument("--mpiexec", help="the mpiexec to use (default: .venv's, else PATH's)")
    g.add_argument("--start-timeout", type=float, default=120.0, metavar="SECONDS",
                   help="across several hosts: stop the job when no process has started rampart (or MPI_Init, "
                        "under --replicas) within this time: a host unreachable or down, a launch agent stuck "
                        "(0: wait forever; default 120)")


def parse_hosts(text, origin):
    """[(host, slots)] from 'h1:2,h2' (or lines of a host file)."""
    hosts = []
    for item in text:
        item = item.split("#", 1)[0].strip()
        if not item:
            continue
        name, slots = item, "1"
        if " slots=" in item:
            name, slots = item.split(" slots=", 1)
        elif ":" in item:
            name, slots = item.rsplit(":", 1)
        name, slots = name.strip(), slots.strip()
        if not name or not slots.isdigit() or int(slots) < 1:
            raise ValueError(f"{origin}: '{item}' is not HOST, HOST:SLOTS or HOST slots=SLOTS with SLOTS >= 1")
        hosts.append((name, int(slots)))
    if not hosts:
        raise ValueError(f"{origin}: no host given")
    if len({h for h, _ in hosts}) != len(hosts):
        raise ValueError(f"{origin}: a host is named twice")
    return hosts


def slurm_hosts():
    """The nodes of the Slurm allocation rampart-run runs in, with their
    task counts; None outside one."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST")
    if not nodelist:
        return None
    if not shutil.which("scontrol"):
        raise ValueError("inside a Slurm allocation without scontrol: give --hosts")
    names = subprocess.run(["scontrol", "show", "hostnames", nodelist], check=True, capture_output=True,
                           text=True).stdout.split()
    counts = []  # SLURM_TASKS_PER_NODE: "2(x3),1"
    for part in os.environ.get("SLURM_TASKS_PER_NODE", "").split(","):
        if part:
            count, _, times = part.partition("(x")
            counts += [int(count)] * (int(times.rstrip(")")) if times else 1)
    if len(counts) != len(names):
        counts = [1] * len(names)
    return list(zip(names, counts))


def hosts_of(a):
    """The hosts the job runs on, or None for this machine alone."""
    if a.hosts:
        hosts = parse_hosts(a.hosts.split(","), "--hosts")
    elif a.hostfile:
        hosts = parse_hosts(Path(a.hostfile).read_text().splitlines(), a.hostfile)
    else:
        hosts = slurm_hosts()
        if hosts and len(hosts) == 1:
            return None  # an allocation of one node: this one
    local = {"localhost", "127.0.0.1", socket.gethostname()}
    if hosts and len(hosts) == 1 and hosts[0][0] in local:
        return None  # one machine: its own placement (docs/run.md)
    return hosts


def replicas_apart(placement, ranks, replicas):
    """The ranks whose replicas share a host (placement: the host of each process)."""
    return [r for r in range(ranks) if len({placement[k * ranks + r] for k in range(replicas)}) < replicas]


def place(hosts, main, spares):
    """The host of each process: `main` processes in blocks proportional to
    the slots, then `spares` each on the host with the most free slots."""
    total = sum(s for _, s in hosts)
    counts = [main * s // total for _, s in hosts]
    by_remainder = sorted(range(len(hosts)), key=lambda j: (-(main * hosts[j][1] % total), j))
    for j in by_remainder[:main - sum(counts)]:
        counts[j] += 1
    placement = [j for j, c in enumerate(counts) for _ in range(c)]
    for _ in range(spares):
        # Ties go to the later host: the first holds rank 0, often the busiest.
        j = max(range(len(hosts)), key=lambda j: (hosts[j][1] - counts[j], j))
        counts[j] += 1
        placement.append(j)
    return placement


def write_rank_file(hosts, placement, path):
    """Open MPI's rank file: process i on its host, on slot i's index there
    (the job runs unbound: --bind-to none)."""
    seen = [0] * len(hosts)
    lines = []
    for process, j in enumerate(placement):
        lines.append(f"rank {process}={hosts[j][0]} slot={seen[j] % hosts[j][1]}")
        seen[j] += 1
    Path(path).write_text("\n".join(lines) + "\n")
    return seen


def rank_file_path():
    """A new file for Open MPI's rank file, on this host (the launcher reads
    it here), whose path holds no "pe" in any case: Open MPI 5.0's launcher
    takes "pe" anywhere in `--map-by rankfile:file=PATH` for its PE=
    modifier and refuses to start (a home folder /home/pete would do it).
    Removed when rampart-run ends."""
    for folder in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        if "pe" in folder.lower() or not os.access(folder, os.W_OK):
            continue
        for _ in range(100):
            fd, path = tempfile.mkstemp(prefix="rampart-rankfile-", dir=folder)
            os.close(fd)
            atexit.register(lambda p=path: os.path.exists(p) and os.remove(p))
            if "pe" not in path.lower():
                return path
    raise ValueError("no folder for the rank file whose path lacks \"pe\" (Open MPI's launcher misreads it): "
                     "set TMPDIR to one")


def report_dir(a, hosts):
    if a.report_dir:
        Path(a.report_dir).mkdir(parents=True, exist_ok=True)
        return tempfile.mkdtemp(prefix="rampart-run-", dir=a.report_dir)
    return tempfile.mkdtemp(prefix=".rampart-run-" if hosts else "rampart-run-", dir=os.getcwd() if hosts else None)


def find_mpiexec(explicit):
    if explicit:
        return explicit
    venv = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "mpiexec"
    return str(venv) if venv.exists() else "mpiexec"


def command(a, hosts, main, spares):
    """mpiexec and its options for a job of main + spares processes, up to
    the process count (the caller adds -x NAME, -n and the program). The
    second value is the host of each process (None on one machine)."""
    # HAN, Open MPI's collectives across nodes, returns success with an
    # unwritten buffer when a process dies during the call.
    cmd = [find_mpiexec(a.mpiexec), "--with-ft", "ulfm", "--mca", "btl", "self,sm,tcp", "--mca", "coll", "^han"]
    placement = None
    if hosts:
        placement = place(hosts, main, spares)
        rank_file = rank_file_path()
        placed = write_rank_file(hosts, placement, rank_file)
        # Unbound: a rank file's slot would pin each process, and all the
        # threads of a rank, to one core.
        cmd += ["--host", ",".join(f"{h}:{max(s, c)}" for (h, s), c in zip(hosts, placed)),
                "--map-by", f"rankfile:file={rank_file}:OVERSUBSCRIBE", "--bind-to", "none"]
        placement = [hosts[j][0] for j in placement]
    else:
        # Open MPI hands a process the notice of another's failure when its
        # progress loop turns its event queue, every 10 ms by default. On one
        # host every 1 ms makes a failure known in about 3 ms instead of 10.
        # Across hosts the queue also carries the TCP traffic, and there it
        # made recoveries slower (docs/architecture.md): the default stays.
        cmd += ["--oversubscribe", "--mca", "mpi_event_tick_rate", "1000"]
    if a.launch_agent:  # a path is made absolute; a command on PATH (ssh -x, srun) stays as given
        agent = a.launch_agent
        cmd += ["--prtemca", "plm_ssh_agent", str(Path(agent).resolve()) if "/" in agent.split()[0] else agent]
    return cmd + shlex.split(a.mpiexec_args), placement


def export(cmd, env, names):
    """-x NAME for each of `names` set in env: the processes on other hosts get it too."""
    for name in names:
        if name in env:
            cmd += ["-x", name]
    return cmd


def base_environment():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def nodes_lost(launcher_text):
    """The hosts whose launcher daemon the job lost, as Open MPI's launcher
    says before it ends the whole job (it cannot go on without a node)."""
    lost = []
    # The daemon lost while the job ran, or while it started.
    for m in re.finditer(r"Remote daemon: *\S+ on node (\S+)|daemon failed to report back.*?Remote host: *(\S+)",
                         launcher_text, re.S):
        name = m.group(1) or m.group(2)
        if name not in lost:
            lost.append(name)
    return lost


class StartDeadline:
    """Whether a job's processes started in time. Open MPI's launcher starts
    no process until every host's daemon has reported back, and waits for
    that without limit: an unreachable host, or a launch agent that hangs,
    leaves the job waiting forever. `started` is the pattern of the notes a
    process leaves once it has started (past MPI_Init); `entered()` says
    whether some process is known to have entered MPI_Init, in which case
    the launcher did its part and the job is left to MPI's and rampart's
    own limits on the start-up (rampart's grows with the job's size)."""

    def __init__(self, a, started, entered):
        # On one machine no daemon is waited for: no limit there.
        seconds = a.start_timeout if a.host_list else 0
        self.hosts = list(dict.fromkeys(h for h, _ in a.host_list or []))
        self.seconds, self.started, self.entered = seconds, started, entered
        self.until = time.monotonic() + seconds if seconds > 0 else None
        self.missed = False

    def passed(self):
        """True, once, when the time is up and no process has started or is
        known to have entered MPI_Init."""
        if self.until is None or time.monotonic() < self.until:
            return False
        self.until = None  # looked at once: from now on the job is the program's
        self.missed = not glob.glob(self.started) and not self.entered()
        return self.missed

    def cause(self):
        """Why nothing started, in a sentence for the user."""
        return (f"no process of the program started within {self.seconds:g} s, and none is known to have entered "
                "MPI_Init: a host's daemon did not report back to the launcher (the host unreachable or down, or "
                "its launch agent stuck), or the program's processes never reached MPI_Init; the job's hosts: "
                + ", ".join(self.hosts) + ". The job was stopped (--start-timeout sets the limit)")


GRACE = 3.0  # seconds a job's processes have to end after SIGTERM before SIGKILL


def session_members(sid):
    """The living processes of a session: mpiexec's, its ranks' and its
    launch agents', when mpiexec was started in a session of its own."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        if fields[3] == str(sid) and fields[0] != "Z":
            pids.append(int(d))
    return pids


def end_session(sid):
    """Ends every process of mpiexec's session. mpiexec first (SIGTERM): it
    ends its processes, on every host, and cleans up after itself. What is
    left after GRACE seconds gets SIGTERM, then SIGKILL: its process group
    and every member, because PRRTE puts each rank in a process group of its
    own. Interrupted meanwhile (Ctrl-C again, SIGTERM), it kills what is
    left at once. True when nothing is left."""
    try:
        signal_session(sid, signal.SIGTERM, mpiexec_only=True)
        wait_session(sid, mpiexec_only=True)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not session_members(sid):
                return True
            signal_session(sid, sig)
            wait_session(sid)
        return not session_members(sid)
    except BaseException:
        signal_session(sid, signal.SIGKILL)
        raise


def signal_session(sid, sig, mpiexec_only=False):
    """Sends sig to mpiexec (its pid is the session's id), or to the whole session."""
    for kill, target in ([(os.kill, sid)] if mpiexec_only else
                         [(os.killpg, sid)] + [(os.kill, pid) for pid in session_members(sid)]):
        try:
            kill(target, sig)
        except OSError:
            pass  # ended already


def wait_session(sid, mpiexec_only=False):
    """Waits up to GRACE seconds for mpiexec, or the whole session, to end."""
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        members = session_members(sid)
        if not members or mpiexec_only and sid not in members:
            return
        time.sleep(0.05)


def end_job(job):
    """Ends a job started with start_new_session=True (mpiexec, and every
    process of its session on this host), and waits for mpiexec."""
    end_session(job.pid)
    try:
        job.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        job.kill()
        job.wait()


def say_nodes_lost(lost):
    if lost:
        print(f"rampart-run: node(s) {', '.join(lost)} lost: Open MPI's launcher ends the whole job when a node "
              "is lost, whatever fault tolerance the program has (docs/cluster.md)", file=sys.stderr)


def run_again_if_launcher_failed(cmd, attempts=3):
    """Runs cmd (an mpiexec command line), its output (standard error in
    standard output) passing through as it comes; runs it again, at most
    attempts - 1 more times, when the launcher itself failed to start before
    any process of the program ran. Returns the last exit code."""
    for attempt in range(1, attempts + 1):
        job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        failed = False
        for line in job.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
            failed = failed or launcher_failed(line.decode(errors="replace"))
        code = job.wait()
        if code == 0 or not failed or attempt == attempts:
            return 128 - code if code < 0 else code  # killed by a signal: as a shell says it
        print(f"rampart-run: the launcher failed to start (attempt {attempt}); starting it again", file=sys.stderr)
        time.sleep(1)


if __name__ == "__main__":
    # For tests and scripts: python3 rampart_launch.py MPIEXEC ARGS...
    if len(sys.argv) < 2:
        sys.exit("usage: rampart_launch.py MPIEXEC ARGS...  (runs it again when the launcher fails to start)")
    sys.exit(run_again_if_launcher_failed(sys.argv[1:]))
