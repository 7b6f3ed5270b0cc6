"""The real session controller (the bundle in session mode), outside any
sandbox (own_pidns 0, the host backend's mode), spoken to over its
stdin/stdout: state across calls (Python and shell), interrupts that keep
the state, a kill that restarts the interpreter and says so, an exit of
the shell, background jobs forked from the session (they see its
variables), files, and the memory figure."""
import json
import os
import select
import subprocess
import sys
import time

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


class Sess:
    def __init__(self, lang, tmp_path):
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.p = subprocess.Popen([PY, "-I", "-c", open(BUNDLE).read(), "session", lang, "/bin/bash", "0", "-",
                                   json.dumps({"nofile": 256})],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  cwd=self.ws)
        self.ch = channel.Channel(self.p.stdout.fileno(), self.p.stdin.fileno())
        hdr, _ = self.ch.recv()
        assert hdr["type"] == "ready" and hdr["lang"] == lang and hdr["sandboxed"] is False, hdr
        self.ready = hdr
        self.next = 0
        self.early = []

    def send(self, typ, payload=None, **hdr):
        self.next += 1
        h = {"type": typ, "id": self.next, **hdr}
        if payload is not None:
            h["code_bytes"] = len(payload)
        self.ch._write(channel.encode(h) + (payload or b""))
        return self.next

    def until(self, rid, typ, timeout=30):
        frames = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not select.select([self.ch.rfd], [], [], max(0, deadline - time.monotonic()))[0]:
                break
            h, payload = self.ch.recv()
            if h.get("id") != rid:
                self.early.append((h, payload))
                continue
            frames.append((h, payload))
            if h["type"] == typ:
                return frames
        raise AssertionError("no %s for %d" % (typ, rid))

    def run(self, code, lang=None, **kw):
        rid = self.send("run", code.encode(), lang=lang or self.ready["lang"])
        return Result(self.until(rid, "done", **kw))

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(30) == 0, self.p.stderr.read()


class Result:
    def __init__(self, frames):
        self.frames = frames
        self.done = frames[-1][0]
        self.out = b"".join(p for h, p in frames if h["type"] == "out" and h["stream"] == "stdout").decode()
        self.err = b"".join(p for h, p in frames if h["type"] == "out" and h["stream"] == "stderr").decode()


@pytest.fixture
def session(tmp_path, request):
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    s = Sess(request.param, tmp_path)
    yield s
    s.close()
    assert not os.path.exists(s.ws), "the host backend's workspace was left"


def session_of(lang):
    return pytest.mark.parametrize("session", [lang], indirect=True)


@session_of("python")
def test_python_state_across_calls(session):
    assert session.run("def f(x):\n    return x * 2\nn = 20\n").done["exit_code"] == 0
    r = session.run("f(n) + 2")
    assert r.out == "42\n" and r.done["exit_code"] == 0 and not r.done["restarted"]
    r = session.run("import sys; print(sys.argv); 1/0")
    assert r.out == "['<cell>']\n" and "ZeroDivisionError" in r.err and r.done["exit_code"] == 1
    assert "<cell 3>" in r.err
    r = session.run("def g():\n    return f(None) + 1\n")
    r = session.run("g()")
    # a traceback through a function of an earlier call shows that call's line
    assert "return f(None) + 1" in r.err and "return x * 2" in r.err, r.err


@session_of("python")
def test_interrupt_keeps_state(session):
    session.run("keep = 'still here'")
    rid = session.send("run", b"import time\nwhile True:\n    time.sleep(0.01)\n", lang="python")
    time.sleep(0.5)
    session.ch.send({"type": "interrupt", "id": rid})
    r = Result(session.until(rid, "done"))
    assert r.done["interrupted"] and not r.done["restarted"] and "KeyboardInterrupt" in r.err
    assert session.run("print(keep)").out == "still here\n"


@session_of("python")
def test_runaway_is_killed_and_restarted(session):
    session.run("keep = 1")
    rid = session.send("run", b"import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n",
                       lang="python")
    time.sleep(0.3)
    session.ch.send({"type": "interrupt", "id": rid})
    time.sleep(0.5)
    session.ch.send({"type": "kill", "id": rid})
    r = Result(session.until(rid, "done"))
    assert r.done["restarted"] and r.done["signal"] == 9 and "restarted" in r.done["reason"]
    assert "NameError" in session.run("keep").err


@session_of("python")
def test_interpreter_exit_between_calls_is_said(session):
    r = session.run("import os, threading, time\n"
                    "threading.Thread(target=lambda: (time.sleep(0.3), os._exit(7))).start()\n")
    assert r.done["exit_code"] == 0
    time.sleep(1)
    r = session.run("print('fresh')")
    assert r.out == "fresh\n" and "exited with status 7 between calls" in r.err, r.err


@session_of("shell")
def test_shell_state_and_exit(session):
    assert session.run("mkdir -p sub && cd sub && export FOO=bar && greet() { echo hi $1; }").done["exit_code"] == 0
    r = session.run("pwd; echo $FOO; greet you; read x; echo read=$?")
    assert r.out.splitlines() == [str(session.ws / "sub"), "bar", "hi you", "read=1"], r.out
    assert session.run("false").done["exit_code"] == 1
    r = session.run("echo bye; exit 4")
    assert r.done["exit_code"] == 4 and r.done["restarted"] and "exited with status 4" in r.done["reason"]
    assert r.out == "bye\n"
    r = session.run("pwd; echo \"[$FOO]\"")
    assert r.out.splitlines() == [str(session.ws), "[]"]


@session_of("shell")
def test_shell_interrupt_returns_from_functions(session):
    session.run("X=kept; spin() { while :; do :; done; }")
    rid = session.send("run", b"spin\necho not-reached\n", lang="shell")
    time.sleep(0.5)
    session.ch.send({"type": "interrupt", "id": rid})
    r = Result(session.until(rid, "done"))
    assert r.done["interrupted"] and r.done["exit_code"] == 130 and "not-reached" not in r.out
    assert session.run("echo $X").out == "kept\n"


@pytest.mark.parametrize("session", ["python", "shell"], indirect=True)
def test_job_sees_session_state_and_runs_beside_calls(session):
    if session.ready["lang"] == "python":
        session.run("base = 40")
        code = b"import time\nfor i in range(3):\n    print(base + i)\n    time.sleep(0.2)\n"
    else:
        session.run("base=40; cd /tmp")
        code = b"for i in 0 1 2; do echo $((base + i)); sleep 0.2; done; pwd"
    jid = session.send("job", code, lang=session.ready["lang"])
    started = session.until(jid, "started")
    assert started[-1][0]["type"] == "started"
    # a call runs while the job runs
    assert session.run("echo call" if session.ready["lang"] == "shell" else "print('call')").out == "call\n"
    frames = [f for f in session.early if f[0]["id"] == jid] + session.until(jid, "done", timeout=20)
    r = Result(frames)
    want = ["40", "41", "42"] + (["/tmp"] if session.ready["lang"] == "shell" else [])
    assert r.out.split() == want and r.done["exit_code"] == 0 and not r.done["killed"]


@session_of("python")
def test_job_kill(session):
    jid = session.send("job", b"import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
                              b"print('x', flush=True)\ntime.sleep(60)\n", lang="python")
    session.until(jid, "started")
    time.sleep(0.3)
    session.ch.send({"type": "jobkill", "id": jid})
    r = Result(session.until(jid, "done"))
    assert r.done["killed"] and r.done["signal"] == 9 and r.out == "x\n"


@session_of("shell")
def test_shell_job_that_ends_at_once_keeps_its_status(session):
    # The job can end before the subshell that started it has reported it;
    # its status must still be its own, every time (it was lost to bash,
    # then reported as unknown: a "failed" job with no reason).
    for i in range(12):
        jid = session.send("job", b"echo quick %d; exit %d" % (i, i % 4), lang="shell")
        r = Result(session.until(jid, "done", timeout=10))
        assert (r.out, r.done["exit_code"], r.done["signal"], r.done["killed"]) == ("quick %d\n" % i, i % 4, 0, False)


@session_of("shell")
def test_shell_job_status_survives_an_interrupt_of_a_call(session):
    # An interrupt is SIGINT to the session shell's group, where the
    # subshell that waits for the job is: it must not die of it.
    jid = session.send("job", b"sleep 0.8; exit 5", lang="shell")
    session.until(jid, "started")
    rid = session.send("run", b"sleep 30", lang="shell")
    time.sleep(0.3)
    session.ch.send({"type": "interrupt", "id": rid})
    assert Result(session.until(rid, "done")).done["interrupted"]
    r = Result([f for f in session.early if f[0]["id"] == jid] + session.until(jid, "done", timeout=10))
    assert (r.done["exit_code"], r.done["killed"]) == (5, False)


@session_of("shell")
def test_shell_job_kill_reports_the_shells_status(session):
    jid = session.send("job", b"echo up; sleep 60", lang="shell")
    session.until(jid, "started")
    time.sleep(0.2)
    session.ch.send({"type": "jobkill", "id": jid})
    r = Result(session.until(jid, "done", timeout=10))
    assert r.done["killed"] and r.done["exit_code"] == 128 + 9 and r.out == "up\n"
    assert session.run("echo still here").out == "still here\n"


def pids_with(marker):
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if marker in f.read().replace(b"\0", b" "):
                    found.append(int(pid))
        except (OSError, ValueError):
            pass
    return found


@session_of("shell")
def test_job_kill_without_reported_start(session):
    # The session's code can keep a job's start from being reported (here it
    # replaces the function that starts jobs with one that does not say):
    # a kill still ends the job's processes, and the job is over.
    session.run('__sb_job() { ( exec >"$3" 2>"$4" </dev/null; . "$2" ) & }')
    marker = b"sleep %d" % (3000 + os.getpid() % 1000)
    jid = session.send("job", b"echo hidden; exec " + marker, lang="shell")
    deadline = time.monotonic() + 10
    while not pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids_with(marker), "the job did not run"
    session.ch.send({"type": "jobkill", "id": jid})
    r = Result(session.until(jid, "done", timeout=10))
    assert r.done["killed"] and r.done["exit_code"] == -1
    assert not any(h["type"] == "started" for h, _ in r.frames)
    deadline = time.monotonic() + 5
    while pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pids_with(marker), "the job's process was left running"
    assert session.run("echo still here").out == "still here\n"


@session_of("python")
def test_files(session):
    rid = session.send("write", b"hello\n", path="/work/d/a.txt")
    rep = session.until(rid, "reply")[-1][0]
    assert rep["ok"] and rep["path"] == "/work/d/a.txt" and rep["bytes"] == 6
    assert (session.ws / "d" / "a.txt").read_bytes() == b"hello\n"
    assert session.run("print(open('d/a.txt').read(), end='')").out == "hello\n"
    rid = session.send("read", path="d/a.txt", offset=1, length=3)
    frames = session.until(rid, "reply")
    assert b"".join(p for h, p in frames if h["type"] == "data") == b"ell"
    assert frames[-1][0]["size"] == 6
    rid = session.send("list", path="d")
    rep = session.until(rid, "reply")[-1][0]
    assert [e["name"] for e in rep["entries"]] == ["a.txt"] and rep["entries"][0]["size"] == 6
    for bad in ("../x", "/etc/passwd"):
        rid = session.send("read", path=bad, offset=0, length=10)
        rep = session.until(rid, "reply")[-1][0]
        assert not rep["ok"] and rep["error"], rep
    os.symlink("/etc", session.ws / "etc")
    rid = session.send("read", path="etc/passwd", offset=0, length=10)
    rep = session.until(rid, "reply")[-1][0]
    assert not rep["ok"] and "outside the workspace" in rep["error"]


@session_of("python")
def test_reset_and_stat(session):
    session.run("big = bytearray(50 << 20)")
    rid = session.send("stat")
    st = session.until(rid, "reply")[-1][0]
    assert st["rss_bytes"] > 50 << 20 and st["private_bytes"] > 50 << 20
    rid = session.send("reset")
    assert session.until(rid, "reply")[-1][0]["ok"]
    assert "NameError" in session.run("big").err


@session_of("sage")
def test_sage_ring_across_calls_and_python_in_it(session):
    if session.ready["import_error"]:
        pytest.skip("Sage does not import here")
    assert session.run("R.<x> = QQ[]").done["exit_code"] == 0
    assert session.run("print(factor(x^4 - 1))", timeout=120).out == "(x - 1) * (x + 1) * (x^2 + 1)\n"
    # Python in a Sage session: the same globals, no preparse (^ is xor)
    assert session.run("print(type(x).__name__, 2^3)", lang="python").out.split()[1] == "1"


def detached(marker):
    """Python code that leaves a daemon: double-forked, setsid, ignoring
    TERM, HUP and INT, with marker in its argv."""
    return ("import os, sys\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        os.execv(sys.executable, [sys.executable, '-c', 'import signal, time\\n"
            "for s in (1, 2, 15): signal.signal(s, signal.SIG_IGN)\\ntime.sleep(300)', '%s'])\n"
            "    os._exit(0)\n" % marker)


def wait_pids(marker, present, timeout=10):
    deadline = time.monotonic() + timeout
    while bool(pids_with(marker.encode())) != present and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids_with(marker.encode())


@session_of("python")
def test_reset_kills_detached_processes_and_spares_jobs(session):
    # A setsid'ed, double-forked daemon that ignores TERM, HUP and
    # INT survived session_reset and kept changing the "fresh" session.
    daemon, job = "sbx-daemon-%d" % os.getpid(), "sbx-resetjob-%d" % os.getpid()
    session.run(detached(daemon))
    assert wait_pids(daemon, True), "the daemon did not start"
    jid = session.send("job", (detached(job) + "import time\ntime.sleep(300)\n").encode(), lang="python")
    session.until(jid, "started")
    assert wait_pids(job, True), "the job's daemon did not start"
    rid = session.send("reset")
    assert session.until(rid, "reply")[-1][0]["ok"]
    assert wait_pids(daemon, False) == [], "a detached process outlived the reset"
    # a running job is not the interpreter's: it and what it detached run on
    assert pids_with(job.encode())
    assert session.run("print('fresh')").out == "fresh\n"
    # Job_cancel missed what the job detached (setsid grandchild)
    session.ch.send({"type": "jobkill", "id": jid})
    assert Result(session.until(jid, "done", timeout=10)).done["killed"]
    assert wait_pids(job, False) == [], "the job's detached grandchild outlived its cancel"
