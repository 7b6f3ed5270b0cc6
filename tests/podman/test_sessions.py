"""On Podman, a session is a container of its own (the sessions
suite, tests/sessions, covers the rest on the native backend). One server,
two sessions: state kept across calls, the workspace /work with the file
tools and a refused escape, a job in a session, neither session seeing the
other, and closing a session ends its processes; the suite then checks that
no container of ours is left once the server has gone."""
import os
import time
import uuid

from hostproc import host_pids_with
from mcpclient import MCP

from conftest import IMAGE, SAGEBOX, as_user_argv, ours, wait_for


def ok(mcp, tool, args):
    r = mcp.call(tool, args, timeout=300)
    assert not r.get("isError"), (tool, r)
    return r["structuredContent"]


def stdout(mcp, sid, code, lang="python"):
    tool = {"python": "run_python", "shell": "run_shell"}[lang]
    return ok(mcp, tool, {"code": code, "session_id": sid})["stdout"]


def test_sessions_in_containers():
    marker = "sb-podman-session-" + uuid.uuid4().hex[:12]
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE), prefix=as_user_argv([])) as mcp:
        a = ok(mcp, "session_open", {"lang": "python"})
        assert a["workspace"] == "/work", a
        a = a["session_id"]
        b = ok(mcp, "session_open", {"lang": "python"})["session_id"]
        assert len(ours()) >= 2  # a container each (and maybe a spare)

        # state across calls, cwd the workspace
        assert stdout(mcp, a, "x = 41\ndef f(y):\n    return y + 1\n") == ""
        assert stdout(mcp, a, "import os\nprint(f(x), os.getcwd())") == "42 /work\n"

        # files: written by the tool, read by the code and back; an escape refused
        ok(mcp, "file_write", {"session_id": a, "path": "notes.txt", "content": "hello\n"})
        assert stdout(mcp, a, "print(open('notes.txt').read(), end='')\n_ = open('/work/out.txt', 'w').write('made')") \
            == "hello\n"
        r = mcp.call("file_read", {"session_id": a, "path": "/work/out.txt"})
        assert not r.get("isError") and r["content"][0]["text"].endswith("\nmade"), r
        assert r["structuredContent"]["size"] == 4, r
        names = {e["name"] for e in ok(mcp, "file_list", {"session_id": a})["entries"]}
        assert {"notes.txt", "out.txt"} <= names, names
        r = mcp.call("file_read", {"session_id": a, "path": "../etc/passwd"})
        assert r.get("isError") and "may not climb" in r["content"][0]["text"], r
        r = mcp.call("file_read", {"session_id": a, "path": "/etc/passwd"})
        assert r.get("isError") and "outside the workspace" in r["content"][0]["text"], r

        # a job in the session sees its variables
        job = ok(mcp, "job_start", {"lang": "python", "code": "print(f(x) + 1)", "session_id": a})["job_id"]
        st = wait_for(lambda: (s := ok(mcp, "job_status", {"job_id": job}))["state"] not in ("queued", "running")
                      and s, timeout=120, step=0.3)
        assert st and st["state"] == "done", st
        assert ok(mcp, "job_output", {"job_id": job})["output"] == "43\n"

        # the other session sees nothing of the first
        assert stdout(mcp, b, "import os\nprint('x' in globals(), os.path.exists('notes.txt'))") == "False False\n"

        # closing a session ends everything it started, a setsid'd process too
        stdout(mcp, b, f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 300; : {marker}'], "
                       "start_new_session=True)")
        assert wait_for(lambda: host_pids_with(marker), timeout=30)
        ok(mcp, "session_close", {"session_id": b})
        assert wait_for(lambda: not host_pids_with(marker), timeout=30), host_pids_with(marker)
        r = mcp.call("run_python", {"code": "1", "session_id": b})
        assert r.get("isError") and "session_open" in r["content"][0]["text"], r
        # the first session is untouched
        assert stdout(mcp, a, "print(x)") == "41\n"
        t0 = time.monotonic()
    # the suite's fixture checks that no container of ours is left
    assert time.monotonic() - t0 < 60


def test_odd_names_and_reset_in_containers():
    """On Podman too, a file name that is not UTF-8 is listed escaped
    and read back by that name, the session keeping its state (it used to
    break the session's frames and end it); session_reset kills a setsid'ed,
    double-forked daemon that ignores TERM, HUP and INT (it used to survive)."""
    marker = "sb-podman-reset-" + uuid.uuid4().hex[:12]
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE), prefix=as_user_argv([])) as mcp:
        sid = ok(mcp, "session_open", {"lang": "python"})["session_id"]
        stdout(mcp, sid, 'import os\nos.mkdir("odd")\nopen(b"/work/odd/\\xff\\xfe-latin1", "wb").write(b"latin\\n")\n'
                         'kept = 41')
        names = [e["name"] for e in ok(mcp, "file_list", {"session_id": sid, "path": "odd"})["entries"]]
        assert names == ["\\xff\\xfe-latin1"], names
        r = mcp.call("file_read", {"session_id": sid, "path": "odd/\\xff\\xfe-latin1"})
        assert not r.get("isError") and r["content"][0]["text"].endswith("\nlatin\n"), r
        assert stdout(mcp, sid, "print(kept + 1)") == "42\n"

        stdout(mcp, sid, "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                         f"        os.execv('/bin/sh', ['sh', '-c', 'trap \"\" TERM HUP INT; sleep 300; : {marker}'])\n"
                         "    os._exit(0)\n")
        assert wait_for(lambda: host_pids_with(marker), timeout=30)
        ok(mcp, "session_reset", {"session_id": sid})
        assert wait_for(lambda: not host_pids_with(marker), timeout=30), host_pids_with(marker)
        assert stdout(mcp, sid, "print('kept' in globals())") == "False\n"


def test_job_cancel_kills_detached_in_containers():
    """On Podman, where a session has no job cgroups, a
    shell job's setsid'ed, double-forked grandchild that ignores TERM, HUP
    and INT is killed by job_cancel (it ran on until session_close: the
    job's waiter is now its subreaper), and the session still answers."""
    marker = "sb-podman-jobcancel-" + uuid.uuid4().hex[:12]
    attack = (f"setsid bash -c 'trap \"\" TERM HUP INT; ( while :; do sleep 0.1; done ) & exit' {marker} "
              "</dev/null >/dev/null 2>&1 &\necho started; sleep 300")
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE), prefix=as_user_argv([])) as mcp:
        sid = ok(mcp, "session_open", {"lang": "shell"})["session_id"]
        job = ok(mcp, "job_start", {"lang": "shell", "code": attack, "session_id": sid})["job_id"]
        assert wait_for(lambda: host_pids_with(marker), timeout=60)
        ok(mcp, "job_cancel", {"job_id": job})
        st = wait_for(lambda: (s := ok(mcp, "job_status", {"job_id": job}))["state"] not in ("queued", "running")
                      and s, timeout=60, step=0.3)
        assert st and st["state"] == "cancelled", st
        assert wait_for(lambda: not host_pids_with(marker), timeout=10), host_pids_with(marker)
        assert stdout(mcp, sid, "echo alive", lang="shell") == "alive\n"
        ok(mcp, "session_close", {"session_id": sid})
