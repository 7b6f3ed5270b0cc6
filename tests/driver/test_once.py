"""The bundle in once mode (a fresh sandbox's command), outside any sandbox,
with the memory limit a user without a memory cgroup gets: RLIMIT_DATA.
Sage's import then prints PARI's "not enough memory, new PARI stack" while
PARI sizes its stack; that is not the job's output (a warm worker imported
Sage long before the job: its jobs never show it), so fresh and warm give
the same stderr (tests/warm/test_isolation.py, run as a normal user)."""
import os
import resource
import subprocess

import pytest

from conftest import BUNDLE

PY = "/usr/bin/python3"
GIB = 1 << 30


def once(lang, code, data_limit):
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
    return subprocess.run([PY, "-I", "-c", open(BUNDLE).read(), "once", lang], input=code,
                          capture_output=True, timeout=120, preexec_fn=limit)


@pytest.fixture(scope="module")
def sage():
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('sage.all_cmdline') is None)"
    if subprocess.run([PY, "-c", probe], capture_output=True).returncode:
        pytest.skip(f"no Sage for {PY}")


def test_sage_import_chatter_is_not_the_jobs_output(sage):
    r = once("sage", b"print(factor(2^10 - 1))\n1/0\n", GIB)
    assert (r.returncode, r.stdout) == (1, b"3 * 11 * 31\n"), r.stderr[-300:]
    assert r.stderr.startswith(b"Traceback (most recent call last):\n"), r.stderr[:300]
    assert b"PARI" not in r.stderr and r.stderr.endswith(b"ZeroDivisionError: rational division by zero\n")


def test_a_failed_import_still_says_why(sage):
    r = once("sage", b"1/0\n", 64 << 20)  # too little for Sage to load at all
    assert r.returncode == 1
    assert b"Traceback (most recent call last):" in r.stderr and b"ZeroDivisionError" not in r.stderr
    assert b"Error" in r.stderr.rstrip().splitlines()[-1]  # the import's own error, last
