"""The bundle in `fresh` mode (a fresh sandbox's command: the worker for
one job, whose child imports Sage), outside any sandbox, with the memory
limit a user without a memory cgroup gets: RLIMIT_DATA. Sage's import then
prints PARI's "not enough memory, new PARI stack" while PARI sizes its
stack; that is not the job's output (a warm worker imported Sage long
before the job: its jobs never show it), so fresh and warm give the same
stderr (tests/warm/test_isolation.py, run as a normal user)."""
import os
import resource
import subprocess
import sys

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

PY = "/usr/bin/python3"
GIB = 1 << 30


def fresh_sage(code, data_limit):
    """One Sage job in fresh mode under RLIMIT_DATA: (exit code, stdout,
    stderr) as the job's frames carry them."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
    run = channel.encode({"type": "run", "id": 1, "lang": "sage", "timeout_ms": 120000, "max_output": 1 << 20,
                          "limits": {"memory_bytes": data_limit}, "code_bytes": len(code)}) + code
    p = subprocess.run([PY, "-I", "-c", open(BUNDLE).read(), "fresh", "sage", "/bin/sh", "0"], input=run,
                       capture_output=True, timeout=180, preexec_fn=limit)
    assert p.returncode == 0, p.stderr[-2000:]
    frames, data = [], p.stdout
    while data:
        n = int.from_bytes(data[:4], "big")
        frames.append(channel.decode_body(data[4:4 + n]))
        data = data[4 + n:]
    done = frames[-1][0]
    assert done["type"] == "done", frames

    def stream(name):
        return b"".join(b for h, b in frames if h["type"] == "out" and h["stream"] == name)
    return done["exit_code"], stream("stdout"), stream("stderr")


@pytest.fixture(scope="module")
def sage():
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('sage.all_cmdline') is None)"
    if subprocess.run([PY, "-c", probe], capture_output=True).returncode:
        pytest.skip(f"no Sage for {PY}")


def test_sage_import_chatter_is_not_the_jobs_output(sage):
    code, out, err = fresh_sage(b"print(factor(2^10 - 1))\n1/0\n", GIB)
    assert (code, out) == (1, b"3 * 11 * 31\n"), err[-300:]
    assert err.startswith(b"Traceback (most recent call last):\n"), err[:300]
    assert b"PARI" not in err and err.endswith(b"ZeroDivisionError: rational division by zero\n")


def test_a_failed_import_still_says_why(sage):
    code, out, err = fresh_sage(b"1/0\n", 96 << 20)  # enough for the worker, too little for Sage
    assert code == 1
    assert b"Traceback (most recent call last):" in err and b"ZeroDivisionError" not in err
    assert b"Error" in err.rstrip().splitlines()[-1]  # the import's own error, last
