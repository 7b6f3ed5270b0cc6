"""The Python worker's forker (src/worker/driver/forker.py): the process
that forks its spares. A job cannot harm it or the worker through it, and
when it is gone or stuck (killed or stopped from outside the sandbox, as
nothing inside can), the worker forks its spares itself and no call fails
or leaves a process behind."""
import os
import signal
import time

import pytest

from conftest import ok, start_mcp, worker_host_pid


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _is_driver(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"sagebox driver" in f.read()
    except OSError:
        return False


def forker_of(worker):
    """The worker's child that has a spare of its own (the janitor has
    none), or None."""
    for c in _children(worker):
        if _is_driver(c) and any(_is_driver(g) for g in _children(c)):
            return c
    return None


def _wait(pred, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return pred()


def _driver_tree(root):
    out, todo = set(), [root]
    while todo:
        p = todo.pop()
        for c in _children(p):
            out.add(c)
            todo.append(c)
    return {p for p in out if _is_driver(p)}


@pytest.fixture
def server():
    m = start_mcp()
    try:
        r = m.run("print(1)", "python")   # starts the Python worker
        assert ok(r), r
        worker = worker_host_pid("python", m.proc.pid)
        assert worker, "no warm Python worker"
        yield m, worker
    finally:
        m.close()


def run_three(m):
    for i in range(3):
        r = m.run(f"print({i} * 7)", "python")
        assert ok(r) and r["stdout"] == f"{i * 7}\n", r


def test_the_spares_are_the_forkers_children(server):
    m, worker = server
    fk = _wait(lambda: forker_of(worker))
    assert fk, f"no forker under the worker {worker}: {_children(worker)}"
    run_three(m)
    # the same forker, with the next job's spare: the worker's own driver
    # children are the janitor and the forker
    assert _wait(lambda: forker_of(worker) == fk)
    assert len([c for c in _children(worker) if _is_driver(c)]) == 2, _children(worker)


def test_a_job_cannot_signal_trace_or_read_the_forker_or_the_worker(server):
    m, worker = server
    assert _wait(lambda: forker_of(worker))
    r = m.run(r"""
import ctypes, errno, os, signal
libc = ctypes.CDLL(None, use_errno=True)
forker = os.getppid()
worker = int(open(f"/proc/{forker}/stat").read().rsplit(")", 1)[1].split()[1])
out = []
for name, pid in (("forker", forker), ("worker", worker)):
    for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
        try:
            os.kill(pid, sig); out.append((name, sig.name, "sent"))
        except OSError as e:
            out.append((name, sig.name, errno.errorcode[e.errno]))
    rc = libc.ptrace(16, pid, 0, 0)
    out.append((name, "ptrace", "ok" if rc == 0 else errno.errorcode[ctypes.get_errno()]))
    for what in ("mem", "environ", "fd/0"):
        try:
            open(f"/proc/{pid}/{what}", "rb").read(1); out.append((name, what, "read"))
        except OSError as e:
            out.append((name, what, errno.errorcode[e.errno]))
print(forker != worker, [x for x in out if x[2] in ("sent", "ok", "read")])
""", "python")
    if "signals" not in r.get("sandbox", {}).get("landlock", {}).get("scoped", []):
        pytest.skip("this kernel's Landlock cannot scope signals (ABI < 6): the status says so")
    assert ok(r) and r["stdout"] == "True []\n", r
    run_three(m)
    assert forker_of(worker), "the forker was harmed"


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_lost_forker_costs_no_call_and_leaves_nothing(server, how):
    m, worker = server
    fk = _wait(lambda: forker_of(worker))
    assert fk
    os.kill(fk, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    t0 = time.time()
    run_three(m)
    # a stopped forker costs the call that finds it stuck its answer's
    # timeout (2 s), no more
    assert time.time() - t0 < 15
    assert _wait(lambda: not os.path.exists(f"/proc/{fk}")), f"the lost forker {fk} is still there"
    # the worker forks its spares itself now: its driver children are the
    # janitor and one spare (the forker's, reparented to the worker, is
    # used up by the calls above)
    run_three(m)
    assert forker_of(worker) is None

    def settled():
        kids = [c for c in _children(worker) if _is_driver(c)]
        return len(kids) == 2 and not any(_children(c) for c in kids)
    assert _wait(settled), _driver_tree(worker)
    before = _driver_tree(worker)
    run_three(m)
    assert _wait(settled) and len(_driver_tree(worker)) == len(before), (before, _driver_tree(worker))
