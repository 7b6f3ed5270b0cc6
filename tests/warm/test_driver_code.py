"""The driver's precompiled code (src/runner/warm/driver_code.c, the loader in
src/worker/bundle.py): made once on the host, outside any sandbox, by the
sandbox's own Python; later sandboxes' drivers take it instead of
compiling their modules at every start; a job can read it and never change
it. The file lives in a cache directory of this test's own (XDG_CACHE_HOME)."""
import os
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, FACTOR, FACTORED, MCP, env_clean, ok, sagebox_run, wait_idle


@pytest.fixture
def cache_home():
    d = tempfile.mkdtemp(prefix="sagebox-test-cache-")
    os.chmod(d, 0o755)  # as the default (/var/cache) is: the sandbox user enters
    yield d
    subprocess.run(["rm", "-rf", d])


def start(cache_home):
    return MCP(BIN, ("--backend", "native", "--isolation", "warm"), env=env_clean({"XDG_CACHE_HOME": cache_home}))


def sage_worker(m):
    return next(w for w in wait_idle(m, "sage")["workers"] if w["kind"] == "sage")


def wait_made(m, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        dc = m.status()["driver_code"]
        if dc["state"] in ("ready", "failed"):
            return dc
        time.sleep(0.2)
    raise AssertionError("the driver's code was not made within %d s" % timeout)


def test_made_once_then_taken_and_never_changed_by_a_job(cache_home):
    d = os.path.join(cache_home, "sagebox", "driver-code")
    os.makedirs(d)
    # another build's file, and half-made ones of a sagebox that died:
    # an hour old (removed) and just begun (another sagebox's: kept)
    for name in ("driver-0123-old-build.code", ".tmp-1", ".tmp-2"):
        open(os.path.join(d, name), "w").write("x")
    hour_ago = time.time() - 3600
    os.utime(os.path.join(d, ".tmp-1"), (hour_ago, hour_ago))

    with start(cache_home) as m:
        # the first sandbox started before the file existed: it compiled
        assert sage_worker(m)["driver_code"] == "compiled"
        dc = wait_made(m)
        assert dc["state"] == "ready", dc
    f = dc["file"]
    assert os.path.dirname(f) == d
    assert sorted(os.listdir(d)) == sorted([os.path.basename(f), ".tmp-2"])
    st = os.stat(f)
    assert stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == os.geteuid()
    before = open(f, "rb").read()
    assert before.startswith(b"sagebox-driver-code ")

    with start(cache_home) as m:
        assert sage_worker(m)["driver_code"] == "precompiled"
        r = m.run(FACTOR, "sage")
        assert ok(r) and r["stdout"].strip() == FACTORED, r
        # From inside: the file is there to read, and nothing a job does
        # changes it for the next sandbox (the variable that named it is
        # gone before the job's code runs).
        r = m.run(r'''
import os
p = "/opt/sagebox/driver-code"
print(open(p, "rb").read(20))
print(os.environ.get("SAGEBOX_DRIVER_CODE"))
for what, f in [("write", lambda: open(p, "r+b").write(b"x")), ("append", lambda: open(p, "ab").write(b"x")),
                ("truncate", lambda: os.truncate(p, 0)), ("unlink", lambda: os.unlink(p)),
                ("rename", lambda: os.rename(p, "/tmp/x")), ("chmod", lambda: os.chmod(p, 0o666)),
                ("replace", lambda: (open("/tmp/y", "wb").write(b"x"), os.rename("/tmp/y", p)))]:
    try:
        f()
        print(what, "DONE")
    except OSError as e:
        print(what, "refused", e.errno)
''', "python")
        assert ok(r), r
        lines = r["stdout"].splitlines()
        assert lines[:2] == ["b'sagebox-driver-code '", "None"], r["stdout"]
        assert all(l.split()[1] == "refused" for l in lines[2:]) and len(lines) == 9, r["stdout"]
        # a session's sandbox takes it too, and its job works
        s = m.call("session_open", {"lang": "python"})
        sid = (s.get("structuredContent") or {}).get("session_id")
        assert sid, s
        r = m.call("run_python", {"code": "import os\nprint(os.path.isfile('/opt/sagebox/driver-code'))\n6 * 7",
                                  "session_id": sid}).get("structuredContent")
        assert r["stdout"] == "True\n42\n", r
        m.call("session_close", {"session_id": sid})
    assert open(f, "rb").read() == before


def test_host_backend_job_does_not_see_the_variable(cache_home):
    res, p = sagebox_run("import os\nprint(os.environ.get('SAGEBOX_DRIVER_CODE'))\n",
                         args=("--backend", "host"), extra_env={"XDG_CACHE_HOME": cache_home})
    assert res["stdout"] == "None\n", (res, p.stderr)


def test_making_it_dies_with_a_killed_sagebox(cache_home, tmp_path):
    # A `python` setting that hangs when asked to make the file: the
    # process making it (outside any sandbox) must not outlive sagebox.
    fake = tmp_path / "python-that-hangs"
    # (it names itself as the Python when sagebox asks, locate.c, so that
    # it is the one asked to make the file; otherwise it is python3)
    fake.write_text('#!/bin/sh\n'
                    'case "$4" in code-cache) exec /usr/bin/python3 -c "import time; time.sleep(300)" "$@";; esac\n'
                    'case "$*" in *SAGEBOX-FOUND*) echo; echo "SAGEBOX-FOUND {\\"executable\\": \\"$0\\", '
                    '\\"prefix\\": \\"/usr\\", \\"base_prefix\\": \\"/usr\\", \\"version\\": null}"; exit 0;; esac\n'
                    'exec /usr/bin/python3 "$@"\n')
    fake.chmod(0o755)
    p = subprocess.Popen([BIN, "mcp", "--backend", "host", "--python", str(fake)], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env_clean({"XDG_CACHE_HOME": cache_home}))

    def makers():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if b"code-cache" in cmd and any(cache_home.encode() in a for a in cmd):
                found.append(int(pid))
        return found

    try:
        deadline = time.time() + 30
        while not makers() and time.time() < deadline:
            time.sleep(0.1)
        assert makers(), "no process making the driver's code"
    finally:
        p.kill()
        p.wait()
    deadline = time.time() + 10
    while makers() and time.time() < deadline:
        time.sleep(0.1)
    assert not makers()
