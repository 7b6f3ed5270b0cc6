"""The user-level service through the real binary: `sagebox mcp
--service` fronts, each the MCP client of tests/lib/mcpclient.py, against a
service they start in a temporary XDG_RUNTIME_DIR. Every test has its own
runtime and state directories and kills what it started at teardown."""
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../lib"))
from mcpclient import MCP  # noqa: E402
from nativecheck import require_native  # noqa: E402

BIN = os.path.abspath(os.environ.get("SAGEBOX_BIN", os.path.join(HERE, "../../build/sagebox")))
# Unique per sandbox, seen from a job: its /tmp's device and the start time
# of its pid 1 (the sandbox's own init, in its pid namespace).
PROBE = "import os\nprint(os.stat('/tmp').st_dev, open('/proc/1/stat').read().rsplit(')', 1)[1].split()[19])\n"


def env_clean(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
    e.update(extra or {})
    return e


def ok(res):
    return res.get("ok") is True and res.get("exit_code") == 0 and "error" not in res, res


def start_time(pid):
    """pid's start time, or None when it is gone or a zombie (it runs nothing)."""
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if f[0] in ("Z", "X") else f[19]


def subtree(root):
    """{pid: start time} of root and its descendants now."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p))
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        st = start_time(p)
        if st is not None:
            out[p] = st
            todo.extend(children.get(p, []))
    return out


def alive(procs, wait=10):
    """Those of {pid: start time} that still run (the same process, not a
    reused pid) after up to wait seconds, with their command lines."""
    deadline = time.monotonic() + wait
    while True:
        left = {p: st for p, st in procs.items() if start_time(p) == st}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    out = {}
    for p in left:
        try:
            out[p] = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            out[p] = "?"
    return out


class Place:
    """A temporary XDG_RUNTIME_DIR and XDG_STATE_HOME, the fronts started
    there, and the services they started (found in the service log)."""

    def __init__(self, tmp):
        self.rt = os.path.join(tmp, "rt")
        self.state = os.path.join(tmp, "state")
        os.makedirs(self.rt, mode=0o700)
        self.env = env_clean({"XDG_RUNTIME_DIR": self.rt, "XDG_STATE_HOME": self.state})
        self.fronts = []

    @property
    def dir(self):
        return os.path.join(self.rt, "sagebox")

    def front(self, *args, idle=30, prefix=(), env=None):
        e = dict(self.env)
        e.update(env or {})
        m = MCP(BIN, ("--service", "--backend", "native", "--service-idle-seconds", str(idle), *args), env=e,
                prefix=prefix)
        self.fronts.append(m)
        return m

    def sockets(self):
        try:
            return sorted(n for n in os.listdir(self.dir) if n.endswith(".sock"))
        except FileNotFoundError:
            return []

    def log(self):
        try:
            return open(os.path.join(self.state, "sagebox", "service.log")).read()
        except FileNotFoundError:
            return ""

    def services(self):
        """{socket name: pid} of the services this place started."""
        return {os.path.basename(s): int(p)
                for p, s in re.findall(r"service: pid (\d+) listening on (\S+)", self.log())}

    def close(self):
        for m in self.fronts:
            m.close()
        for pid in self.services().values():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            for _ in range(300):
                if start_time(pid) is None:
                    break
                time.sleep(0.1)
            else:
                os.kill(pid, signal.SIGKILL)


def probe(m):
    r = m.run(PROBE, "sage")
    assert ok(r)[0], r
    return r["stdout"].strip()


@pytest.fixture
def place():
    # short: a Unix socket's path has at most 107 bytes (pytest's tmp_path
    # is too long for the runtime directory)
    tmp = tempfile.mkdtemp(prefix="sbsvc", dir="/tmp")
    p = Place(tmp)
    yield p
    p.close()
    log = p.log()
    shutil.rmtree(tmp, ignore_errors=True)
    # a sanitizer build's service reports on its own stderr, the log
    assert "Sanitizer" not in log and "runtime error" not in log, log


@pytest.fixture(scope="session", autouse=True)
def binary_and_native():
    require_native(BIN, env_clean())


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)
