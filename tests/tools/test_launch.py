"""rampart-run's launch module: hosts as the user gives them, where each
process goes, the rank file Open MPI reads, and the lost nodes found in
the launcher's words. Run by pytest (CTest tools.launch)."""
import os
import sys
from argparse import Namespace
from collections import Counter

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import rampart_launch as launch  # noqa: E402


def test_hosts_in_every_form():
    assert launch.parse_hosts(["a:2", "b", " c slots=3 ", "# a comment", ""], "f") == [("a", 2), ("b", 1), ("c", 3)]


@pytest.mark.parametrize("bad", [["a:0"], ["a:x"], [":2"], ["a", "a:2"], []])
def test_bad_hosts_are_refused(bad):
    with pytest.raises(ValueError):
        launch.parse_hosts(bad, "--hosts")


def test_one_local_host_is_this_machine():
    a = Namespace(hosts="localhost:4", hostfile=None)
    assert launch.hosts_of(a) is None
    assert launch.hosts_of(Namespace(hosts="n1:2,n2:2", hostfile=None)) == [("n1", 2), ("n2", 2)]


def test_ranks_in_blocks_spares_spread():
    hosts = [("n0", 2), ("n1", 2), ("n2", 2)]
    assert launch.place(hosts, 6, 0) == [0, 0, 1, 1, 2, 2]
    # Two spares: on two different nodes, the most free first.
    assert launch.place(hosts, 4, 2) == [0, 0, 1, 2, 2, 1]


def test_blocks_follow_the_slots():
    assert Counter(launch.place([("big", 6), ("small", 2)], 8, 0)) == Counter({0: 6, 1: 2})
    assert Counter(launch.place([("big", 6), ("small", 2)], 4, 0)) == Counter({0: 3, 1: 1})


@pytest.mark.parametrize("ranks,replicas,nodes", [(3, 2, 3), (4, 2, 2), (5, 3, 3), (4, 2, 4), (6, 3, 6)])
def test_replicas_of_a_rank_on_different_nodes(ranks, replicas, nodes):
    placement = launch.place([(f"n{j}", 4) for j in range(nodes)], ranks * replicas, 0)
    for rank in range(ranks):
        where = [placement[k * ranks + rank] for k in range(replicas)]
        assert len(set(where)) == replicas, (rank, where)


def test_replicas_sharing_a_node_are_found():
    assert launch.replicas_apart(["a", "a", "b", "b"], 2, 2) == []
    assert launch.replicas_apart(launch.place([("a", 3), ("b", 1)], 4, 0), 2, 2) == [0]


def test_rank_file(tmp_path):
    hosts = [("n0", 2), ("n1", 1)]
    placed = launch.write_rank_file(hosts, [0, 0, 1, 1], tmp_path / "rf")
    assert placed == [2, 2]
    assert (tmp_path / "rf").read_text().splitlines() == [
        "rank 0=n0 slot=0", "rank 1=n0 slot=1", "rank 2=n1 slot=0", "rank 3=n1 slot=0"]


def test_command_across_hosts(tmp_path):
    a = Namespace(mpiexec="mpiexec", launch_agent="./agent", mpiexec_args="--mca x 'a b'")
    cmd, placement = launch.command(a, [("n0", 1), ("n1", 1)], 2, 1)
    assert placement == ["n0", "n1", "n1"]
    assert cmd[cmd.index("--host") + 1] == "n0:1,n1:2"
    assert cmd[-3:] == ["--mca", "x", "a b"]
    assert os.path.isabs(cmd[cmd.index("plm_ssh_agent") + 1])
    assert cmd[cmd.index("--bind-to") + 1] == "none"
    a.launch_agent = "ssh -x"  # a command on PATH stays as given
    cmd, _ = launch.command(a, [("n0", 1), ("n1", 1)], 2, 0)
    assert cmd[cmd.index("plm_ssh_agent") + 1] == "ssh -x"
    cmd, placement = launch.command(Namespace(mpiexec="m", launch_agent=None, mpiexec_args=""), None, 2, 0)
    assert placement is None and "--oversubscribe" in cmd


def test_rank_file_path_never_holds_pe(monkeypatch, tmp_path):
    # Open MPI's launcher reads "pe" anywhere in the rank file's path as its
    # PE= modifier and refuses to start: a TMPDIR of /home/pete is passed over.
    folder = tmp_path / "pete"
    folder.mkdir()
    monkeypatch.setattr(launch.tempfile, "tempdir", str(folder))
    paths = [launch.rank_file_path() for _ in range(200)]
    assert all("pe" not in p.lower() and os.path.exists(p) for p in paths)
    a = Namespace(mpiexec="mpiexec", launch_agent=None, mpiexec_args="")
    cmd, _ = launch.command(a, [("n0", 1), ("n1", 1)], 2, 0)
    assert "pe" not in cmd[cmd.index("--map-by") + 1].lower()


def test_nodes_lost_in_the_launchers_words():
    running = "PRTE has lost communication with a remote daemon.\n  HNP daemon : [x@0,0] on node vm\n" \
              "  Remote daemon: [x@0,2] on node rpnode1\n"
    starting = "A daemon failed to report back after being spawned.\n  Local host:    vm\n  Remote host:   rpnode2\n"
    assert launch.nodes_lost(running) == ["rpnode1"]
    assert launch.nodes_lost(starting + running) == ["rpnode2", "rpnode1"]
    assert launch.nodes_lost("rank 3 died") == []


def test_slurm_task_counts(monkeypatch, tmp_path):
    fake = tmp_path / "scontrol"
    fake.write_text("#!/bin/sh\necho c1; echo c2; echo c3; echo c4\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "c[1-4]")
    monkeypatch.setenv("SLURM_TASKS_PER_NODE", "2(x3),1")
    assert launch.slurm_hosts() == [("c1", 2), ("c2", 2), ("c3", 2), ("c4", 1)]
    assert launch.hosts_of(Namespace(hosts=None, hostfile=None)) == [("c1", 2), ("c2", 2), ("c3", 2), ("c4", 1)]
    fake.write_text("#!/bin/sh\necho c1\n")  # an allocation of one node: this machine
    monkeypatch.setenv("SLURM_TASKS_PER_NODE", "4")
    assert launch.hosts_of(Namespace(hosts=None, hostfile=None)) is None
