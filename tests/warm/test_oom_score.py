"""The OOM killer's first choice is the job, not the worker it came from
(confine.prefer_oom_kill): every job's process, warm or fresh, Sage or
Python, and a session's interpreter have the highest oom_score_adj, and
the warm worker keeps its own. (Written while the process
is undumpable, when its /proc files belong to root, it would fail with
EACCES in every job, unnoticed.)"""
from conftest import ok, sagebox_run, worker_host_pid

READ = "print(open('/proc/self/oom_score_adj').read().strip())\n"
FIRST_CHOICE = "1000\n"


def test_a_warm_job_is_the_oom_killers_first_choice_and_its_worker_is_not(mcp):
    for lang in ("python", "sage", "python"):  # the second Python job from a spare forked ahead
        r = mcp.run(READ, lang)
        assert ok(r), r
        assert r["stdout"] == FIRST_CHOICE, (lang, r)
    worker = worker_host_pid("sage", mcp.proc.pid)
    assert worker is not None
    assert open(f"/proc/{worker}/oom_score_adj").read().strip() != "1000"


def test_a_fresh_job_is_the_oom_killers_first_choice():
    for lang in ("python", "sage"):
        res, p = sagebox_run(READ, lang, args=("--isolation", "fresh"))
        assert res.get("exit_code") == 0, (res, p.stderr)
        assert res["stdout"] == FIRST_CHOICE, res


def test_a_session_is_the_oom_killers_first_choice(mcp):
    r = mcp.call("session_open", {"lang": "python"})
    sid = r["structuredContent"]["session_id"]
    try:
        r = mcp.call("run_python", {"code": READ, "session_id": sid})
        sc = r["structuredContent"]
        assert sc.get("exit_code") == 0 and sc["stdout"] == FIRST_CHOICE, r
    finally:
        mcp.call("session_close", {"session_id": sid})
