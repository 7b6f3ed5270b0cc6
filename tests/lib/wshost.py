"""Where a named-workspace test runs sagebox: as root or as the unprivileged
test user (sagebox-test), on the native backend or on Podman (as the test
user: rootless). A Host starts `sagebox mcp` servers and `sagebox
workspaces` commands with one data directory (XDG_DATA_HOME) of its own,
so a later server finds what an earlier one kept, and reads that store
from the outside as the user would."""
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

from mcpclient import MCP
from shared_binary import shared_copy

USER = os.environ.get("SB_TEST_USER", "sagebox-test")
# (by its path: the server's environment has a PATH without /usr/sbin)
RUNUSER = shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser"
STORE = ("sagebox", "workspaces")


class Host:
    def __init__(self, binary, as_user=False, backend="native", image=None, base=None):
        self.as_user = as_user
        self.backend = backend
        self.image = image
        self.binary = shared_copy(binary, "sagebox-ws-bin.") if as_user else binary
        self.base = tempfile.mkdtemp(prefix="sagebox-ws-", dir=base)
        os.chmod(self.base, 0o755)
        self.data = os.path.join(self.base, "data")
        os.mkdir(self.data, 0o700)
        if as_user:
            pw = pwd.getpwnam(USER)
            self.uid, self.gid, self.home = pw.pw_uid, pw.pw_gid, pw.pw_dir
            os.chown(self.data, self.uid, self.gid)
        else:
            self.uid, self.gid, self.home = 0, 0, os.environ.get("HOME", "/root")
        self.servers = []

    @property
    def store(self):
        return os.path.join(self.data, *STORE, "local")

    def env(self):
        e = {"XDG_DATA_HOME": self.data, "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin"}
        if self.as_user:
            e.update(HOME=self.home, USER=USER, LOGNAME=USER, XDG_RUNTIME_DIR="/run/user/%d" % self.uid)
        else:
            e["HOME"] = self.home
        return e

    def prefix(self):
        if not self.as_user:
            return ()
        return (RUNUSER, "-u", USER, "--", "env", "-i", "-C", "/", *["%s=%s" % kv for kv in self.env().items()])

    def flags(self, *args):
        f = ["--backend", self.backend]
        if self.image:
            f += ["--image", self.image]
        return f + list(args)

    def mcp(self, *args):
        """A `sagebox mcp` server with these setting flags."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
        env.update(self.env())
        m = MCP(self.binary, self.flags(*args), env=env, prefix=self.prefix())
        self.servers.append(m)
        return m

    def cli(self, *args, timeout=120):
        """`sagebox workspaces ARGS` as this host's user."""
        argv = [*self.prefix(), self.binary, "workspaces", *args]
        env = None if self.as_user else dict(os.environ, **self.env())
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd="/")

    def server_pid(self, m):
        """The sagebox process (as the test user, runuser's child)."""
        if not self.as_user:
            return m.proc.pid
        kids = open("/proc/%d/task/%d/children" % (m.proc.pid, m.proc.pid)).read().split()
        return int(kids[0])

    def kill(self, m):
        """SIGKILL the server: nothing of it cleans up."""
        os.kill(self.server_pid(m), signal.SIGKILL)
        m.proc.wait(timeout=60)

    def term_all(self, m, client_first=False):
        """SIGTERM to the server and every process below it at once, as
        systemd stops the unit or scope that holds them (a reboot, a
        logout, `systemctl stop`); then wait for the server to end.
        client_first: the client goes first (its stdin closes: the server
        begins its stop) and the SIGTERMs come during that stop, again and
        again for a second, as when the client's unit stops first."""
        pids, todo = [], [self.server_pid(m)]
        while todo:
            p = todo.pop()
            pids.append(p)
            for t in os.listdir("/proc/%d/task" % p):
                try:
                    todo += [int(c) for c in open("/proc/%d/task/%s/children" % (p, t)).read().split()]
                except OSError:
                    pass
        fds = []  # (by pidfd: a pid that ended is never another process's)
        for p in pids:
            try:
                fds.append(os.pidfd_open(p))
            except ProcessLookupError:
                pass
        if client_first:
            m.proc.stdin.close()
        end = time.monotonic() + (1 if client_first else 0)
        while True:
            for fd in fds:
                try:
                    signal.pidfd_send_signal(fd, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            if time.monotonic() >= end:
                break
        for fd in fds:
            os.close(fd)
        m.proc.wait(timeout=120)
        return len(pids)

    def close(self):
        for m in self.servers:
            if m.proc.poll() is None:
                m.close()
        shutil.rmtree(self.base, ignore_errors=True)


def text(r):
    return "\n".join(c.get("text", "") for c in r["content"] if c.get("type") == "text")


def ok(m, tool, args, timeout=300):
    r = m.call(tool, args, timeout=timeout)
    assert not r.get("isError"), (tool, text(r))
    return r


def run(m, sid, code, lang="sage", timeout=300):
    tool = {"sage": "run_sagemath", "python": "run_python", "shell": "run_shell"}[lang]
    return m.call(tool, {"code": code, "session_id": sid}, timeout=timeout)


def out(m, sid, code, lang="sage"):
    r = run(m, sid, code, lang)
    assert not r.get("isError"), text(r)
    return r["structuredContent"]["stdout"]


def disk_bytes(path):
    """Allocated bytes of the regular files beneath path (what du counts)."""
    total = 0
    for d, _, names in os.walk(path):
        for n in names:
            st = os.lstat(os.path.join(d, n))
            total += st.st_blocks * 512
    return total
