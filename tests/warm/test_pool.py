"""The pool: prestart, concurrency, cancellation, recycling, and workers
that die (killed from the host) while idle or during a job."""
import os
import signal
import threading
import time

import pytest

from conftest import FACTOR, FACTORED, ok, start_mcp, wait_idle, worker_host_pid
from hostproc import children


def test_prestart_makes_the_first_call_fast():
    with start_mcp() as m:
        t0 = time.time()
        r = m.run(FACTOR, "sage")  # waits for the worker mcp started at once
        first = time.time() - t0
        assert ok(r) and r["stdout"].strip() == FACTORED, r
        wait_idle(m, "sage")
        t0 = time.time()
        r = m.run(FACTOR, "sage")
        assert ok(r), r
        assert time.time() - t0 < 1.0, "a warm call took more than a second"
        assert first < 60


def test_status_shows_the_pool(mcp):
    st = mcp.status()
    assert st["isolation"] == "warm"
    kinds = {w["kind"]: w for w in st["pool"]["workers"]}
    assert "sage" in kinds and kinds["sage"]["sage"], st["pool"]


def test_worker_killed_while_idle(mcp):
    mcp.run("print(1)")
    wait_idle(mcp, "python")
    pid = worker_host_pid("python", mcp.proc.pid)
    assert pid, "no python worker found on the host"
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    r = mcp.run("print('after')")
    assert ok(r) and r["stdout"] == "after\n", r


def test_worker_killed_during_a_job(mcp):
    wait_idle(mcp, "python")
    pid = worker_host_pid("python", mcp.proc.pid)
    box = {}
    t = threading.Thread(target=lambda: box.update(r=mcp.run("import time; time.sleep(20)")))
    t.start()
    time.sleep(1.0)
    assert pid, "no python worker of this sagebox found on the host"
    os.kill(pid, signal.SIGKILL)
    t.join(30)
    r = box["r"]
    assert r["ok"] is False and "warm worker" in r.get("error", ""), r
    r = mcp.run("print('next')")
    assert ok(r) and r["stdout"] == "next\n", r


def test_cancel_kills_the_job_not_the_next():
    with start_mcp() as m:
        m.run("print(1)")
        marker = f"{time.time_ns() % 10**9}.55"
        rid = m.send_request("tools/call", {"name": "run_python", "arguments": {
            "code": f"import subprocess\nsubprocess.run(['/bin/sleep', '{marker}'])"}})
        time.sleep(1.0)
        m.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
        deadline = time.time() + 5
        from conftest import host_pids_with
        while host_pids_with(marker) and time.time() < deadline:
            time.sleep(0.1)
        assert host_pids_with(marker) == []
        r = m.run("print('next')")
        assert ok(r) and r["stdout"] == "next\n", r


def test_concurrent_jobs_run_in_parallel():
    with start_mcp("--pool-size", "2") as m:
        deadline = time.time() + 120
        while time.time() < deadline:
            ws = m.status()["pool"]["workers"]
            if sum(1 for w in ws if w["kind"] == "sage" and w["state"] == "idle") >= 2:
                break
            time.sleep(0.2)
        time.sleep(10)  # their warm-ups (plot, Maxima) run once they are ready
        results = []
        t0 = time.time()
        ts = [threading.Thread(target=lambda: results.append(m.run("import time\ntime.sleep(1.5r)\nprint('done')", "sage")))
              for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        took = time.time() - t0
        assert len(results) == 2 and all(ok(r) for r in results), results
        assert took < 2.9, f"two 1.5 s jobs took {took:.1f} s: not parallel"


def test_a_worker_under_calls_back_to_back_still_warms_up():
    """A worker started under load (the pool grew, or replaced a recycled
    one) is never idle long enough for its warm-ups; it must not run every
    job cold for ever. Two calls always in flight on one worker: the next
    run frame is there as soon as a job is done. matplotlib.pyplot is
    imported by a warm-up step, by no job here, so a job sees it in
    sys.modules only once the worker has warmed up."""
    code = "import sys\nprint('matplotlib.pyplot' in sys.modules)\n"
    args = {"name": "run_sagemath", "arguments": {"code": code}}
    with start_mcp("--max-concurrent", "1") as m:
        # sent at once: they wait for the worker's import, so it never idles
        pending = [m.send_request("tools/call", args) for _ in range(2)]
        seen = []
        while pending:
            msg = m.wait(pending.pop(0), 300)
            r = msg["result"]["structuredContent"]
            assert ok(r), r
            seen.append(r["stdout"].strip())
            if len(seen) + len(pending) < 60:
                pending.append(m.send_request("tools/call", args))
        assert seen[0] == "False", seen  # the first job ran before any warm-up
        assert seen[-10:] == ["True"] * 10, seen


def test_calls_go_to_the_oldest_idle_worker():
    """After the pool grew, one client's calls go on to the worker that
    ran the earlier ones (warmed up), not to the one added for the burst,
    which idles into its own warm-ups."""
    with start_mcp() as m:
        for _ in range(4):
            assert ok(m.run("print(1)"))
        burst = [m.send_request("tools/call", {"name": "run_python", "arguments": {
            "code": "import time\ntime.sleep(2)"}}) for _ in range(2)]
        for rid in burst:
            assert ok(m.wait(rid, 120)["result"]["structuredContent"])
        deadline = time.time() + 120
        while sum(1 for w in m.status()["pool"]["workers"]
                  if w["kind"] == "python" and w["state"] == "idle") < 2:
            assert time.time() < deadline, m.status()["pool"]
            time.sleep(0.2)
        seen = []
        for _ in range(3):
            r = m.run("print(1)")
            assert ok(r), r
            seen.append(r["sandbox"]["warm"]["worker_jobs"])
        assert seen == [6, 7, 8], seen  # the first worker's 4, one of the burst's, then these


def test_a_replacement_warms_up_before_its_first_call():
    """worker_max_jobs: the replacement starts half the jobs ahead and
    waits at the pool's tail, warming up, while the old worker takes the
    calls, so its first call finds it warm (matplotlib.pyplot is imported
    by a warm-up step, by no job here). Started at the old worker's last
    job, it took that call, and the ones after it, cold."""
    code = "import sys, time\ntime.sleep(float('0.3'))\nprint('matplotlib.pyplot' in sys.modules)\n"
    with start_mcp("--worker-max-jobs", "40") as m:
        seen = []
        while len(seen) < 2 or seen[-1][0] != 1:
            assert len(seen) <= 41, seen
            r = m.run(code, "sage")
            assert ok(r), (r["stderr"], r["stdout"])
            seen.append((r["sandbox"]["warm"]["worker_jobs"], r["stdout"].strip()))
        assert len(seen) >= 40, seen  # the old worker ran its 39 or 40
        assert seen[-1][1] == "True", seen  # the replacement's first call


def test_recycling_after_max_jobs():
    with start_mcp("--worker-max-jobs", "3") as m:
        seen = []
        for i in range(8):
            r = m.run(f"print({i})")
            assert ok(r) and r["stdout"] == f"{i}\n", r
            seen.append(r["sandbox"]["warm"]["worker_jobs"])
        assert max(seen) <= 3, seen


def _memory_kib(pid):
    """A process's resident and anonymous memory (KiB); None once it is gone
    or its mappings cannot be read."""
    try:
        lines = open(f"/proc/{pid}/smaps_rollup").read().splitlines()
    except OSError:
        return None
    got = {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in lines) if k in ("Rss", "Anonymous")}
    return got if len(got) == 2 else None


@pytest.mark.parametrize("lang,jobs,code", [
    ("sage", 400, FACTOR + "plot(sin(x), (x, 0, 1))\nprint('x' * 4000)\n"),
    ("python", 1500, "import json, sys\nprint(json.dumps(list(range(800))))\nprint('e' * 3000, file=sys.stderr)\n"),
])
def test_a_worker_does_not_grow_over_its_jobs(lang, jobs, code):
    """worker_max_jobs bounds a worker's life in jobs, not its memory: each
    job runs in a fork, and the worker and its long-lived helpers (the
    janitor, the forker) hold none of a job's bytes. Their memory after
    hundreds of jobs with output, errors and figures is what it was after
    the first few; a leak of 8 KiB a job (80 MiB over a default lifetime)
    fails this."""
    with start_mcp("--pool-size", "1") as m:
        for _ in range(20):
            assert ok(m.run(code, lang))
        wait_idle(m, lang, 300)  # (a worker's kind is named as its language here)
        time.sleep(15)  # its idle warm-up steps, which change its memory, are done
        worker = worker_host_pid(lang, m.proc.pid)
        assert worker, "no warm worker found"
        before = {p: _memory_kib(p) for p in [worker, *children(worker)]}
        for _ in range(jobs):
            r = m.run(code, lang)
            assert ok(r), r
        ran = r["sandbox"]["warm"]["worker_jobs"]
        after = {p: _memory_kib(p) for p in [worker, *children(worker)]}
        kept = [p for p in before if before[p] and after.get(p)]  # the worker and its helpers, not the spares
        assert worker in kept and len(kept) >= 2, (before, after)
        assert ran >= jobs, f"the jobs did not all run on one worker ({ran} on the last one)"
        for key in ("Rss", "Anonymous"):
            grown = sum(after[p][key] - before[p][key] for p in kept)
            assert grown <= 4096, f"{key} of the worker and its helpers grew {grown} KiB over {jobs} {lang} jobs"


@pytest.mark.parametrize("lang,code", [("python", "print(1)"), ("shell", "echo 1"), ("sage", "print(1)")])
def test_sagebox_run_uses_a_warm_worker(lang, code):
    from conftest import sagebox_run
    res, p = sagebox_run(code, lang, args=("--backend", "native"))
    assert res["ok"] and res["stdout"] == "1\n" and res["sandbox"]["isolation"] == "warm", res
