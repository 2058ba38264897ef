#!/usr/bin/env python3
"""Runs mpi4py's own test modules under process replication: each module
natively first (mpiexec; once for every variant, a note in the cache folder
keeps its success), then with rampart-run and the given options; a module
passes when both runs end with exit code 0 and every rank's unittest
summary says OK. The test modules come from mpi4py's source
distribution on PyPI (the version installed in the environment), fetched
once into a cache folder and checked against PyPI's SHA-256.

usage: mpi4py_suite.py RAMPART_RUN MPIEXEC REPLICA_LIB PYTHON CACHE_DIR -n N [rampart-run options] -- MODULE...

Prints PASS: or FAIL: lines (CTest matches them).
"""
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

from session_run import run_in_session

INDEX = "https://pypi.org/simple/mpi4py/"
RETRY = Path(__file__).resolve().parent / "mpiexec_retry.sh"


def mpi4py_version(python):
    out = subprocess.run([python, "-c", "import mpi4py; print(mpi4py.__version__)"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("FAIL: mpi4py is not installed in " + python + " (tools/setup.sh installs it)")
    return out.stdout.strip()


def test_folder(version, cache):
    """mpi4py's test/ folder of that version, fetched and unpacked once."""
    folder = cache / f"mpi4py-{version}"
    if (folder / "test" / "main.py").is_file():
        return folder / "test"
    page = urllib.request.urlopen(INDEX, timeout=60).read().decode()
    m = re.search(r'href="([^"]*/mpi4py-' + re.escape(version) + r'\.tar\.gz)#sha256=([0-9a-f]{64})"', page)
    if not m:
        sys.exit(f"FAIL: no source distribution of mpi4py {version} on {INDEX}")
    data = urllib.request.urlopen(m.group(1), timeout=120).read()
    if hashlib.sha256(data).hexdigest() != m.group(2):
        sys.exit("FAIL: the mpi4py source distribution does not match PyPI's SHA-256")
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"mpi4py-{version}.tar.gz.{os.getpid()}"
    archive.write_bytes(data)
    staging = cache / f"staging.{os.getpid()}"
    with tarfile.open(archive) as tar:
        # Plain files and folders of test/, nothing that leaves it.
        members = [t for t in tar.getmembers() if re.match(rf"mpi4py-{re.escape(version)}/test/", t.name)
                   and (t.isfile() or t.isdir()) and ".." not in Path(t.name).parts]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(staging, members=members, filter="data")
        else:  # Python before 3.11.4, as Debian 12's 3.11.2: the checks above
            tar.extractall(staging, members=members)
    archive.unlink()
    try:
        os.rename(staging / f"mpi4py-{version}", folder)  # a concurrent run may have won: fine
    except OSError:
        pass
    return folder / "test"


def passed(text, ranks):
    return len(re.findall(r"^OK\b", text, re.M)) >= ranks and "FAILED" not in text


def run_module(cmd, cwd, ranks):
    p = run_in_session(cmd, 300, cwd=cwd, merge_output=True)
    if p is None:
        return False, "no end within 300 s"
    return p.returncode == 0 and passed(p.stdout, ranks), p.stdout


def native_run(cmd, cwd, ranks, passed_note, mpiexec, python):
    """run_module for the native run, which every variant of the same
    module and ranks shares: once it has passed with this very command, MPI
    and Python (the note holds them, with their files' times), it is not
    run again."""
    key = " ".join(cmd) + "".join(f"\n{f} {os.stat(f).st_mtime_ns}" for f in (mpiexec, python))
    if passed_note.is_file() and passed_note.read_text() == key:
        return True, "passed before"
    ok, text = run_module(cmd, cwd, ranks)
    if ok:
        passed_note.write_text(key)
    return ok, text


def main():
    rampart_run, mpiexec, lib, python, cache = sys.argv[1:6]
    rest = sys.argv[6:]
    split = rest.index("--")
    options, modules = rest[:split], rest[split + 1:]
    ranks = int(options[options.index("-n") + 1])
    tests = test_folder(mpi4py_version(python), Path(cache))
    env_root = ["env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"]
    failed = []
    for module in modules:
        program = [python, str(tests / "main.py"), module]
        # Started again if Open MPI's launcher itself fails to start.
        native_ok, native = native_run(env_root + [str(RETRY), mpiexec, "--oversubscribe", "-n", str(ranks)] + program,
                                       tests.parent, ranks, Path(cache) / f"native-passed.{module}.n{ranks}", mpiexec, python)
        if not native_ok:
            print(f"FAIL: {module} fails natively:\n{native[-3000:]}")
            failed.append(module)
            continue
        ok, text = run_module([rampart_run, "--replica-lib", lib, "--mpiexec", mpiexec] + options + ["--"] + program,
                              tests.parent, ranks)
        if ok and "--kill" in options and re.search(r"processes killed: none", text):
            ok, text = False, "the --kill never took effect\n" + text
        print(f"{module}: {'passed' if ok else 'FAILED'}")
        if not ok:
            print(text[-4000:])
            failed.append(module)
    if failed:
        print("FAIL: " + ", ".join(failed))
        return 1
    print(f"PASS: {len(modules)} modules of mpi4py's test suite under {' '.join(options)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
