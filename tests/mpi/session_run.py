"""Runs a command in a session of its own, so that a timeout ends it with
every process it started (mpiexec, its retry wrapper, the ranks), not only
the first."""
import os
import signal
import subprocess


def run_in_session(cmd, timeout, cwd=None, env=None, stdin=None, merge_output=False):
    """A subprocess.CompletedProcess (stderr in stdout with `merge_output`),
    or None when the command did not end within `timeout` seconds."""
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE if stdin else None, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge_output else subprocess.PIPE, text=True,
                          start_new_session=True) as p:
        try:
            out, err = p.communicate(input=stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return None
    return subprocess.CompletedProcess(cmd, p.returncode, out, err or "")
