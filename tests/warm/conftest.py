"""Warm isolation through the real binary: many jobs on one `sagebox mcp`
(so they share warm workers), checked from the outside. The MCP client is
tests/lib/mcpclient.py; `sagebox run` is used for fresh-mode comparisons and for the
hostile fake workers (host backend, --python pointing at a script)."""
import json
import os
import subprocess
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
from mcpclient import MCP
from nativecheck import require_native
from hostproc import host_pids_with  # noqa: F401

BIN = os.path.abspath(os.environ.get("SAGEBOX_BIN", os.path.join(HERE, "../../build/sagebox")))
FACTOR = "R.<x> = QQ[]\nprint(factor(x^4 - 1))\n"
FACTORED = "(x - 1) * (x + 1) * (x^2 + 1)"


def env_clean(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
    e.update(extra or {})
    return e


def start_mcp(*args):
    return MCP(BIN, ("--backend", "native", "--isolation", "warm", *args), env=env_clean())


def wait_idle(m, kind, timeout=120):
    """Wait until a worker of this kind is idle (warm and ready)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        pool = m.status().get("pool", {})
        if any(w.get("kind") == kind and w.get("state") == "idle" for w in pool.get("workers", [])):
            return pool
        time.sleep(0.2)
    raise AssertionError(f"no idle {kind} worker after {timeout} s")


def sagebox_run(code, lang="python", args=(), timeout=120, extra_env=None):
    p = subprocess.run([BIN, "run", "--json", "--lang", lang, *args, "-"], input=code, capture_output=True,
                       text=True, timeout=timeout, env=env_clean(extra_env))
    try:
        return json.loads(p.stdout), p
    except json.JSONDecodeError:
        pytest.fail(f"no JSON from sagebox run: rc={p.returncode} stderr={p.stderr[-2000:]!r}")


def _ppid(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])


def worker_host_pid(kind, root):
    """Host pid of a warm worker of this kind started by the sagebox whose
    pid is root (other sageboxes on the machine, another test's or
    another user's, are not ours to kill): the python3 running the driver
    in worker mode whose parent is not one (not a job child)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            if len(cmd) < 9 or cmd[4] != b"worker" or cmd[5] != kind.encode():
                continue
            ppid = _ppid(pid)
            pcmd = open(f"/proc/{ppid}/cmdline", "rb").read().split(b"\0")
            if len(pcmd) > 4 and pcmd[4] == b"worker":
                continue
            up = ppid
            while up > 1 and up != root:
                up = _ppid(up)
            if up == root:
                return int(pid)
        except (OSError, IndexError, ValueError):
            continue
    return None


def ok(res):
    return res.get("ok") is True and res.get("exit_code") == 0 and "error" not in res


@pytest.fixture(scope="session", autouse=True)
def binary_and_native():
    require_native(BIN, env_clean())


@pytest.fixture(scope="module")
def mcp():
    m = start_mcp()
    try:
        wait_idle(m, "sage")
        yield m
    finally:
        m.close()


@pytest.fixture
def healthy(mcp):
    """After the test: the same server still runs jobs correctly and fast."""
    yield mcp
    r = mcp.run("print(6 * 7)", "python")
    assert ok(r) and r["stdout"] == "42\n", r
    r = mcp.run(FACTOR, "sage")
    assert ok(r) and r["stdout"].strip() == FACTORED, r
