"""What the Python worker carries into every job's fork: every module it
imports is memory each fork copies the page-table entries of and each
job's exit tears down (docs/WARM.md). Modules only some jobs use
are left to those jobs, as a fresh `python3 -I file.py` leaves them:
tempfile (random, shutil, bz2, lzma), IPython's text helpers (pathlib,
urllib), which only a !cmd needs, and socket, which only the network
relay needs (tests/network: the relay with `network` set)."""
import subprocess

from conftest import ok

LEFT_TO_THE_JOB = ("tempfile", "shutil", "pathlib", "urllib.parse", "ipaddress", "socket", "selectors")
PROBE = "import sys\nprint(sorted(m for m in %r if m in sys.modules))\n" % (LEFT_TO_THE_JOB,)


def test_a_python_job_starts_without_what_only_some_jobs_use(mcp):
    fresh = subprocess.run(["/usr/bin/python3", "-I", "-c", PROBE], capture_output=True, text=True, check=True)
    for _ in range(2):  # the second from a spare forked ahead of it
        r = mcp.run(PROBE, "python")
        assert ok(r), r
        # ([] here; more only where the system's site imports them itself)
        assert r["stdout"] == fresh.stdout, (r, fresh.stdout)


def test_a_job_that_uses_them_imports_them(mcp):
    # a !cmd with $name and {expr} loads IPython's text helpers in the job
    r = mcp.run("import tempfile\nn = 5\nx = !echo {n + 1} $n\nprint(x, x.n, tempfile.gettempdir())\n", "python")
    assert ok(r), r
    assert r["stdout"] == "['6 5'] 6 5 /tmp\n", r
