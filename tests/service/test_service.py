"""sagebox mcp --service: a restarted client's first call finds
the warm worker; another client or other settings get a service of their
own; sessions stay with their connection; the idle exit and SIGTERM leave
nothing; any trouble falls back to the in-process server; a peer of another
client identity is refused."""
import os
import signal
import subprocess
import sys
import time

from conftest import alive, mode, ok, probe, start_time, subtree

# A parent of another executable: the shell stays the front's parent
# (the "; exit" keeps it from exec'ing the front).
VIA_SH = ("/bin/sh", "-c", '"$0" "$@"; exit $?')


# The job's parent (the warm worker: its pid in the sandbox and start time)
# and whether the job was born with Sage imported.
WORKER = ("import os, sys\n"
          "pp = os.getppid()\n"
          "print(pp, open(f'/proc/{pp}/stat').read().rsplit(')', 1)[1].split()[19], 'sage.all' in sys.modules)\n")


def first_call(place, *args, **kw):
    m = place.front(*args, **kw)
    return m, probe(m)


def test_restarted_client_finds_the_warm_sandbox(place):
    m1, p1 = first_call(place)
    r = m1.run(WORKER, "sage")
    assert ok(r)[0], r
    w1 = r["stdout"].split()
    assert w1[2] == "True", r
    assert m1.close() == 0
    socks = place.sockets()
    assert len(socks) == 1, socks
    assert mode(place.dir) == 0o700
    assert mode(os.path.join(place.dir, socks[0])) == 0o600
    m2 = place.front()
    r = m2.run(WORKER, "sage")
    assert ok(r)[0], r
    p2 = probe(m2)
    assert m2.close() == 0
    assert p2 == p1, "the second client got another sandbox"
    assert len(place.services()) == 1, place.log()
    # the second client's first call was forked by the worker that served the
    # first client, with Sage imported: no new start, no new import of Sage
    assert r["stdout"].split() == w1, (r["stdout"], w1)
    assert "serving in this process" not in m2.stderr.decode()
    assert "relaying to the service at " + os.path.join(place.dir, socks[0]) in m2.stderr.decode()


def test_other_client_or_settings_get_their_own_service(place):
    m1, p1 = first_call(place)
    m2, p2 = first_call(place, prefix=VIA_SH)
    m3, p3 = first_call(place, "--timeout", "61")
    assert len(place.sockets()) == 3, place.sockets()
    assert len({p1, p2, p3}) == 3, (p1, p2, p3)
    idents = place.log()
    assert "for " + os.path.realpath("/bin/sh") in idents, idents
    assert "for " + os.path.realpath(sys.executable) in idents, idents


def test_a_session_belongs_to_its_connection(place):
    m1 = place.front()
    r = m1.call("session_open", {"lang": "python"})
    sid = r["structuredContent"]["session_id"]
    r = m1.call("run_python", {"code": "x = 41", "session_id": sid})
    assert not r.get("isError"), r
    m2 = place.front()  # the same client identity and settings: the same service
    assert len(place.services()) == 1
    r = m2.call("run_python", {"code": "print(x)", "session_id": sid})
    assert r.get("isError"), r
    assert "unknown session id" in r["content"][0]["text"], r
    r = m1.call("run_python", {"code": "print(x + 1)", "session_id": sid})
    assert r["structuredContent"]["stdout"] == "42\n", r
    assert m1.close() == 0
    m3 = place.front()
    r = m3.call("run_python", {"code": "print(x)", "session_id": sid})
    assert r.get("isError") and "unknown session id" in r["content"][0]["text"], r


def wait_gone(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if start_time(pid) is None:
            return True
        time.sleep(0.2)
    return False


def test_idle_exit_leaves_nothing(place):
    m = place.front(idle=3)
    probe(m)
    # a session and a background job: both end with the connection, or the
    # service would stay up for session_idle_minutes and job_timeout
    sid = m.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
    r = m.call("job_start", {"lang": "python", "code": "import time\ntime.sleep(600)"})
    assert not r.get("isError"), r
    (pid,) = place.services().values()
    procs = subtree(pid)
    assert len(procs) > 3, procs  # the service, its warm worker's sandbox, the session's, the job's
    assert sid
    assert m.close() == 0
    t = time.monotonic()
    assert wait_gone(pid, 40), "the service did not exit after its idle time:\n" + place.log()
    assert time.monotonic() - t >= 2.5
    assert alive(procs) == {}, alive(procs)
    assert place.sockets() == []
    assert "idle for 3 s: stopping" in place.log()


def test_sigterm_leaves_nothing(place):
    m = place.front()
    probe(m)
    (pid,) = place.services().values()
    procs = subtree(pid)
    os.kill(pid, signal.SIGTERM)
    assert wait_gone(pid, 30), place.log()
    assert alive(procs) == {}, alive(procs)
    assert place.sockets() == []
    m.close()


def fallback(place, **kw):
    m = place.front(**kw)
    p = probe(m)
    assert p
    assert m.close() == 0
    err = m.stderr.decode()
    assert "serving in this process instead" in err, err
    assert place.services() == {}
    return err


def test_fallback_without_runtime_dir(place):
    err = fallback(place, prefix=("env", "-u", "XDG_RUNTIME_DIR"))
    assert "XDG_RUNTIME_DIR is not set" in err, err


def test_fallback_when_others_may_enter_the_dir(place):
    os.mkdir(place.dir, 0o700)
    os.chmod(place.dir, 0o770)
    err = fallback(place)
    assert "mode 770" in err, err
    assert place.sockets() == []


def test_fallback_on_a_symlinked_dir(place, tmp_path):
    os.mkdir(tmp_path / "elsewhere", 0o700)
    os.symlink(tmp_path / "elsewhere", place.dir)
    err = fallback(place)
    assert "is not a directory" in err, err
    assert os.listdir(tmp_path / "elsewhere") == []


PEER = r'''
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
data = b""
while not data.endswith(b"\n"):
    b = s.recv(1)
    if not b:
        break
    data += b
print(data.decode().strip())
'''


def peer_says(path):
    """What the service says to a process that connects straight to it,
    a child of this python (so its client identity is this python)."""
    p = subprocess.run([sys.executable, "-c", PEER, path], capture_output=True, text=True, timeout=30)
    return p.stdout.strip()


def test_a_peer_of_another_client_is_refused(place):
    m_sh = place.front(prefix=VIA_SH)  # a service for /bin/sh's client
    probe(m_sh)
    (sock_sh,) = place.sockets()
    m_py = place.front()                # and one for this python's
    probe(m_py)
    (sock_py,) = set(place.sockets()) - {sock_sh}
    said = peer_says(os.path.join(place.dir, sock_sh))
    assert said.startswith("sagebox-service refused: the peer's client is"), said
    assert "refused a connection" in place.log()
    # the control: the same peer to the service of its own client identity
    assert peer_says(os.path.join(place.dir, sock_py)) == "sagebox-service ok"
    # the refused peer took nothing away: the service still serves its client
    assert probe(m_sh)


def test_a_long_log_is_moved_aside_when_a_service_starts(place):
    """The log grows with every call for as long as --service is used: a
    service that starts past 1 MiB of it moves it to service.log.1."""
    logdir = os.path.join(place.state, "sagebox")
    os.makedirs(logdir, exist_ok=True)
    with open(os.path.join(logdir, "service.log"), "w") as f:
        f.write("an old line\n" * 100000)  # 1.2 MB
    m = place.front()
    probe(m)
    assert "an old line" not in place.log() and "listening on" in place.log()
    assert os.path.getsize(os.path.join(logdir, "service.log.1")) == 1200000
    m.close()
