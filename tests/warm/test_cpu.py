"""The CPU limit on warm jobs (src/sandbox/native/cgroup.c JOB_CGROUP): with
a cgroup cpu controller, each job's process moves into a cgroup of its own
held to `cpus`, and the worker's own work (forking the next job's process,
resetting /tmp) gets one core more. Checked from inside the jobs: a busy job
stays held to `cpus`, everything it starts is in the job cgroup, and no
route out of it (cgroupfs, an inherited or borrowed fd of the worker or the
waiting spare) is open. A session runs code itself: it gets no job cgroup,
so its code is held to `cpus` by the sandbox's own cgroup."""
import json

import pytest

from conftest import ok, start_mcp
from cpu_busy import BUSY, held_to  # tests/lib

CPUS = 0.5

# The cpu line of /proc/self/cgroup, from the job, a program it runs, a
# grandchild that left its session, and of each thread: the job's own
# (the spare moved its one thread: cgroup v1's `tasks`) and one it starts.
WHERE = r"""
import json, os, subprocess, threading
def cpu_line(text):
    lines = text.splitlines()
    return ([l for l in lines if "cpu" in l.split(":")[1].split(",")] or [l for l in lines if l.startswith("0::")])[0]
me = cpu_line(open("/proc/self/cgroup").read())
child = cpu_line(subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True, text=True).stdout)
gc = cpu_line(subprocess.run(["setsid", "sh", "-c", "cat /proc/self/cgroup"], capture_output=True, text=True).stdout)
threads = [cpu_line(open("/proc/thread-self/cgroup").read())]
t = threading.Thread(target=lambda: threads.append(cpu_line(open("/proc/thread-self/cgroup").read())))
t.start(); t.join()
print(json.dumps([me, child, gc] + threads))
"""

# Every way out of the job cgroup the job could look for.
ESCAPE = r"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
found = []
# 1. a cgroup filesystem: none is mounted, and none may be mounted
for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified"):
    for name in ("cgroup.procs", "tasks"):
        p = os.path.join(root, name)
        try:
            fd = os.open(p, os.O_WRONLY)
            found.append("open " + p)
            os.close(fd)
        except OSError:
            pass
os.makedirs("/tmp/cg", exist_ok=True)
for fstype, opts in ((b"cgroup2", None), (b"cgroup", b"cpu")):
    if libc.mount(b"none", b"/tmp/cg", fstype, 0, opts) == 0:
        found.append("mounted " + fstype.decode())
# 2. an fd of its own
for fd in os.listdir("/proc/self/fd"):
    try:
        link = os.readlink("/proc/self/fd/" + fd)
    except OSError:
        continue
    if "cgroup" in link:
        found.append("own fd %s -> %s" % (fd, link))
# 3. an fd of another process of the sandbox (the worker, the waiting
# spare, the janitor, init): through /proc, and through pidfd_getfd
SYS_pidfd_open, SYS_pidfd_getfd = 434, 438
others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
for pid in others:
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        fds = []
    for fd in fds:
        path = "/proc/%d/fd/%s" % (pid, fd)
        try:
            link = os.readlink(path)
        except OSError:
            link = "?"
        try:
            f = os.open(path, os.O_WRONLY)
        except OSError:
            continue
        found.append("reopened %s -> %s" % (path, link))
        os.close(f)
    pidfd = libc.syscall(SYS_pidfd_open, pid, 0)
    if pidfd < 0:
        continue
    for fd in range(0, 300):
        got = libc.syscall(SYS_pidfd_getfd, pidfd, fd, 0)
        if got >= 0:
            found.append("pidfd_getfd %d:%d -> %s" % (pid, fd, os.readlink("/proc/self/fd/%d" % got)))
            os.close(got)
    os.close(pidfd)
lines = open("/proc/self/cgroup").read().splitlines()
after = [l for l in lines if ":cpu," in l or ":cpu:" in l] or [l for l in lines if l.startswith("0::")]
print(json.dumps({"found": found, "pids_seen": len(others), "after": after}))
"""


@pytest.fixture(scope="module")
def cpu_mcp():
    m = start_mcp("--cpus", str(CPUS))
    yield m
    m.close()


def _per_job(m):
    """The warm worker's `enforced` cpus row; skip where nothing limits CPU."""
    r = m.run("print(1)")
    assert ok(r), r
    cpus = r["sandbox"]["cpus"]
    if cpus.get("enforced_by") is None:
        pytest.skip("no cgroup cpu controller here: CPU is not limited (status says so)")
    return cpus


def _where_expected(line, cpus):
    """A cgroup line of a job's process: in the job cgroup exactly when
    the limit is per job."""
    return line.endswith("/job") == (cpus["per"] == "job")


def _as(lang, code):
    """Sage preparses (1.5 becomes a RealNumber, 434 an Integer ctypes
    cannot pass): the same Python, run by Sage's interpreter."""
    return code if lang == "python" else "exec(%r)\n" % code


def _last_json(r):
    assert ok(r), r
    return json.loads(r["stdout"].strip().splitlines()[-1])


def test_the_limit_is_on_each_job_and_said_so(cpu_mcp):
    cpus = _per_job(cpu_mcp)
    assert cpus["limit"] == CPUS, cpus
    if cpus["per"] == "job":
        assert cpus["sandbox_limit"] == CPUS + 1, cpus
        assert "each job" in cpus["note"], cpus
    else:
        assert cpus["per"] == "sandbox" and "sandbox_limit" not in cpus, cpus


@pytest.mark.parametrize("lang", ["python", "sage"])
def test_a_busy_job_is_held_to_cpus(cpu_mcp, lang):
    _per_job(cpu_mcp)
    code = _as(lang, BUSY)
    for _ in range(2):  # the first job, and one on a spare forked meanwhile
        p = _last_json(cpu_mcp.run(code, lang, timeout_s=30))
        assert held_to(p, CPUS), p


def test_the_job_and_all_it_starts_are_in_the_job_cgroup(cpu_mcp):
    cpus = _per_job(cpu_mcp)
    for lang in ("python", "sage"):
        lines = _last_json(cpu_mcp.run(_as(lang, WHERE), lang))
        assert len(lines) == 5, lines   # the job, a program, a grandchild, two threads
        for line in lines:
            assert _where_expected(line, cpus), (lang, lines, cpus)
    line = 'grep -E ":cpu[,:]" /proc/self/cgroup || grep "^0::" /proc/self/cgroup'
    r = cpu_mcp.run(f"{line}\nsh -c '{line}'\n", "shell")
    assert ok(r), r
    lines = r["stdout"].split()
    assert len(lines) == 2 and all(_where_expected(l, cpus) for l in lines), (r, cpus)


@pytest.mark.parametrize("lang", ["python", "sage"])
def test_calls_back_to_back_each_run_in_the_job_cgroup(cpu_mcp, lang):
    # Back to back (once the worker's warm-ups are over: always for
    # Python), each job runs in a spare forked during the job before it,
    # which moves itself into the job cgroup while that job still runs
    # (child.run): each one is there when its code starts.
    cpus = _per_job(cpu_mcp)
    for _ in range(5):
        lines = _last_json(cpu_mcp.run(_as(lang, WHERE), lang))
        assert all(_where_expected(line, cpus) for line in lines), (lang, lines, cpus)


@pytest.mark.parametrize("lang", ["python", "sage"])
def test_no_way_out_of_the_job_cgroup(cpu_mcp, lang):
    cpus = _per_job(cpu_mcp)
    res = _last_json(cpu_mcp.run(_as(lang, ESCAPE), lang, timeout_s=60))
    assert res["found"] == [], res
    # it saw the others (init, the worker, the janitor, a spare), and is
    # still where it was put
    assert res["pids_seen"] >= 2, res
    assert res["after"] and all(_where_expected(l, cpus) for l in res["after"]), res
    # and the next job is held as before
    p = _last_json(cpu_mcp.run(BUSY, timeout_s=30))
    assert held_to(p, CPUS), p


def test_session_code_is_not_given_the_job_cgroup(cpu_mcp):
    # A session's interpreter runs the code itself: with the job cgroup's
    # fd it would run with the worker's larger share.
    _per_job(cpu_mcp)
    r = cpu_mcp.call("session_open", {"lang": "python"})
    sid = r["structuredContent"]["session_id"]
    try:
        r = cpu_mcp.call("run_python", {"code": WHERE + "import os\nprint(sorted(os.environ))\n",
                                        "session_id": sid})
        out = r["structuredContent"]["stdout"].strip().splitlines()
        lines = json.loads(out[-2])
        assert not any(l.endswith("/job") for l in lines), lines
        assert "SAGEBOX_JOB_CGROUP_FD" not in out[-1], out
        r = cpu_mcp.call("run_python", {"code": BUSY, "session_id": sid, "timeout_seconds": 30})
        p = json.loads(r["structuredContent"]["stdout"].strip().splitlines()[-1])
        assert held_to(p, CPUS), p
    finally:
        cpu_mcp.call("session_close", {"session_id": sid})
