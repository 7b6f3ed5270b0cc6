"""What the checks inside a scripts/vm-check guest share: one line per check
in the results file ("PASS name: what was seen" / "FAIL name: ..."), the
sagebox binary run as the guest's normal user would, cgroups looked up
from the outside, and one MCP call over HTTP with a bearer token."""
import functools
import json
import os
import subprocess
import time
import traceback
import urllib.request

SAGEBOX = os.environ.get("SAGEBOX_BIN", "/usr/bin/sagebox")
RESULTS = os.environ.get("VM_RESULTS", "/dev/stdout")
CG = "/sys/fs/cgroup"


def report(word, name, detail):
    line = f"{word} {name}: {' '.join(str(detail).split())[:600]}"
    print(line, flush=True)
    if RESULTS != "/dev/stdout":
        with open(RESULTS, "a") as f:
            f.write(line + "\n")


def check(name):
    """A check: the function returns what it saw (PASS) or raises (FAIL)."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(*a, **kw):
            t0 = time.time()
            try:
                seen = fn(*a, **kw)
                report("PASS", name, f"{seen} ({time.time() - t0:.0f} s)")
                return True
            except Exception as e:  # noqa: BLE001: a check's failure is its result
                traceback.print_exc()
                report("FAIL", name, f"{type(e).__name__}: {e} ({time.time() - t0:.0f} s)")
                return False
        run.check_name = name
        return run
    return wrap


def sh(*cmd, timeout=300, env=None, check_rc=True, input=None):
    """Run cmd, return CompletedProcess (text); fail on a non-zero exit."""
    e = dict(os.environ)
    if env:
        for k, v in env.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, env=e, input=input)
    if check_rc and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)[:200]} exited {p.returncode}: {p.stderr[-800:]} {p.stdout[-400:]}")
    return p


def status_json(*prefix, env=None):
    """`sagebox status --json` started through prefix (e.g. systemd-run)."""
    p = sh(*prefix, SAGEBOX, "status", "--json", env=env, timeout=600)
    return json.loads(p.stdout)


def cgroup_dirs_named(prefix, top=CG):
    """Every cgroup directory under top whose name starts with prefix."""
    found = []
    for d, subdirs, _ in os.walk(top):
        for s in subdirs:
            if s.startswith(prefix):
                found.append(os.path.join(d, s))
    return found


def wait_for(pred, timeout, step=0.2):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def pids_with(marker):
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


class Mcp:
    """One MCP client over Streamable HTTP, with a bearer token."""

    def __init__(self, url, token):
        self.url, self.token, self.sid, self.n = url, token, None, 0

    def post(self, msg, timeout=600):
        h = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
             "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        req = urllib.request.Request(self.url, json.dumps(msg).encode(), h)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            self.sid = r.headers.get("Mcp-Session-Id", self.sid)
            body = r.read().decode()
        for line in body.splitlines():
            line = line[5:].strip() if line.startswith("data:") else line.strip()
            if line.startswith("{") and '"id"' in line:
                return json.loads(line)
        return None

    def initialize(self):
        self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "vm-check", "version": "1"}}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool, **args):
        self.n += 1
        r = self.post({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                       "params": {"name": tool, "arguments": args}})
        assert r and "result" in r, r
        return "".join(c.get("text", "") for c in r["result"].get("content", []))


def wait_token(path, url, timeout=60):
    def ready():
        try:
            tok = open(path).read().strip()
            urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=2)
        except urllib.error.HTTPError:
            return tok  # it answers (405/401): it listens
        except OSError:
            return None
        return tok
    tok = wait_for(ready, timeout, 0.5)
    assert tok, f"no token in {path} or nothing answering at {url} within {timeout} s"
    return tok


def listening(port):
    """Whether anything listens on TCP port (from /proc/net/tcp*)."""
    hexport = f":{port:04X}"
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            for line in open(f).read().splitlines()[1:]:
                parts = line.split()
                if parts[1].endswith(hexport) and parts[3] == "0A":
                    return True
        except OSError:
            pass
    return False
