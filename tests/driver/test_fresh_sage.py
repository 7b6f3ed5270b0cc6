"""The bundle in `fresh` mode (a fresh sandbox's command: the worker for
one job, whose child imports Sage), outside any sandbox, with the memory
limit a user without a memory cgroup gets: RLIMIT_DATA. Sage's import then
prints PARI's "not enough memory, new PARI stack" while PARI sizes its
stack; that is not the job's output (a warm worker imported Sage long
before the job: its jobs never show it), so fresh and warm give the same
stderr (tests/warm/test_isolation.py, run as a normal user)."""
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

PY = "/usr/bin/python3"
GIB = 1 << 30


def fresh_sage(code, data_limit, during_import=None, lang="sage"):
    """One Sage job in fresh mode under RLIMIT_DATA: (its done frame,
    stdout, stderr) as the job's frames carry them. during_import(pid), if
    given, is called with the job's process while it imports Sage."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
    run = channel.encode({"type": "run", "id": 1, "lang": lang, "timeout_ms": 120000, "max_output": 1 << 20,
                          "limits": {"memory_bytes": data_limit}, "code_bytes": len(code)}) + code
    with tempfile.TemporaryFile() as f:
        f.write(run)
        f.seek(0)
        p = subprocess.Popen([PY, "-I", "-c", open(BUNDLE).read(), "fresh", "sage", "/bin/sh", "0"],
                             stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    if during_import is not None:
        during_import(child_of(p.pid))
    stdout, stderr = p.communicate(timeout=180)
    assert p.returncode == 0, stderr[-2000:]
    frames, data = [], stdout
    while data:
        n = int.from_bytes(data[:4], "big")
        frames.append(channel.decode_body(data[4:4 + n]))
        data = data[4 + n:]
    done = frames[-1][0]
    assert done["type"] == "done", frames

    def stream(name):
        return b"".join(b for h, b in frames if h["type"] == "out" and h["stream"] == name)
    return done, stream("stdout"), stream("stderr")


def child_of(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
        time.sleep(0.01)
    raise AssertionError("the worker forked no child")


@pytest.fixture(scope="module")
def sage():
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('sage.all_cmdline') is None)"
    if subprocess.run([PY, "-c", probe], capture_output=True).returncode:
        pytest.skip(f"no Sage for {PY}")


def test_sage_import_chatter_is_not_the_jobs_output(sage):
    done, out, err = fresh_sage(b"print(factor(2^10 - 1))\n1/0\n", GIB)
    assert (done["exit_code"], out) == (1, b"3 * 11 * 31\n"), (done, err[-300:])
    assert err.startswith(b"Traceback (most recent call last):\n"), err[:300]
    assert b"PARI" not in err and err.endswith(b"ZeroDivisionError: rational division by zero\n")


def test_a_failed_import_still_says_why(sage):
    # Where the import fails under RLIMIT_DATA varies from run to run (ASLR,
    # MALLOC_PERTURB_): in Python code (the import's own traceback), or in C
    # code that crashes (the worker says so). Either way the job ends at
    # once and says why; it never hangs until its timeout (cysignals' crash
    # report could deadlock) or ends saying nothing (seen in CI: exit 1 or
    # SIGKILL at the timeout, with no stderr).
    for _ in range(3):
        done, out, err = fresh_sage(b"1/0\n", 96 << 20)  # enough for the worker, too little for Sage
        assert not done["timed_out"] and b"ZeroDivisionError" not in err, (done, err[-2000:])
        last = err.rstrip().splitlines()[-1]
        if done["signal"]:
            assert done["exit_code"] == -1 and last.startswith(
                b"sagebox: the job's process was killed by signal %d (" % done["signal"]), (done, err[-2000:])
            assert b"while it imported Sage, before the job's code ran, under a memory limit of 96 MiB" in last
        else:
            assert done["exit_code"] == 1, (done, err[-2000:])
            assert b"Traceback (most recent call last):" in err and b"Error" in last, err[-2000:]


@pytest.mark.parametrize("sig,name", [(signal.SIGKILL, b"SIGKILL"),
                                      (signal.SIGRTMIN + 6, b"Real-time signal 6")])  # (no Signals member)
def test_a_job_that_dies_in_the_import_is_said_to(sage, sig, name):
    def kill(pid):
        time.sleep(0.1)  # inside the import (0.4 s or more), or before it
        os.kill(pid, sig)
    done, out, err = fresh_sage(b"print('not reached')\n", GIB, during_import=kill)
    assert (done["exit_code"], done["signal"], out) == (-1, sig, b""), (done, err[-2000:])
    assert err.endswith(b"sagebox: the job's process was killed by signal %d (%s) while it imported Sage, "
                        b"before the job's code ran, under a memory limit of 1024 MiB: most likely Sage ran out "
                        b"of memory as it started. Raise the memory limit (the memory setting).\n"
                        % (sig, name)), err[-2000:]


@pytest.mark.parametrize("lang", ["sage", "python"])
def test_a_job_that_dies_after_the_import_is_not_said_to(sage, lang):
    # (a Python job in a Sage worker imports no Sage: nothing to say either)
    done, out, err = fresh_sage(b"import os, signal\nprint('ran', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n",
                                GIB, lang=lang)
    assert (done["exit_code"], done["signal"], out) == (-1, 9, b"ran\n"), (done, err[-2000:])
    assert b"sagebox:" not in err, err[-2000:]
