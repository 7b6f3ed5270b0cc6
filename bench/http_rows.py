"""HTTP rows of the benchmark, kept apart from bench/run: tools/call
p50/p95 over `sagebox mcp --http` (2026-07-28 requests, one keep-alive
connection, JSON answers) against the same calls over stdio, warm,
native. Throughput by HTTP clients is bench/scale_rows.py's: its load
runs in node, where a client in Python threads would take a good part of
two CPUs itself."""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


class HttpServer:
    def __init__(self, binary, args=()):
        self.state = tempfile.mkdtemp(prefix="sagebox-bench-http-")
        env = dict(os.environ, XDG_STATE_HOME=self.state)
        self.proc = subprocess.Popen([binary, "mcp", "--http", "127.0.0.1:0", *args], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = b""
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError(f"sagebox mcp --http did not start: {err.decode(errors='replace')}")
            err += line
            m = re.search(rb"serving MCP over HTTP at http://([0-9.]+):(\d+)/mcp", line)
            if m:
                self.host, self.port = m.group(1).decode(), int(m.group(2))
                break
        threading.Thread(target=lambda: self.proc.stderr.read(), daemon=True).start()
        with open(os.path.join(self.state, "sagebox", "token")) as f:
            self.token = f.read().strip()

    def close(self):
        self.proc.send_signal(signal.SIGINT)  # at once (SIGTERM drains first)
        self.proc.wait(timeout=60)
        shutil.rmtree(self.state, ignore_errors=True)  # (its token and audit state)


class HttpClient:
    """One connection, kept alive; calls back to back."""

    def __init__(self, server):
        self.s = server
        self.conn = http.client.HTTPConnection(server.host, server.port, timeout=600)
        self.n = 0

    def call(self, code, expect):
        self.n += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                           "params": {"name": "run_sagemath", "arguments": {"code": code}, "_meta": META}})
        t0 = time.monotonic()
        self.conn.request("POST", "/mcp", body, {
            "Content-Type": "application/json", "Accept": "application/json",
            "Authorization": f"Bearer {self.s.token}", "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call", "Mcp-Name": "run_sagemath"})
        r = self.conn.getresponse()
        data = json.loads(r.read())
        dt = (time.monotonic() - t0) * 1000
        sc = data.get("result", {}).get("structuredContent", {})
        if r.status != 200 or sc.get("exit_code") != 0 or expect not in sc.get("stdout", ""):
            raise RuntimeError(f"HTTP tools/call failed: {r.status} {data}")
        return dt


def measure(binary, start_stdio, call_stdio, wait_warm, code, expect, n, log):
    """{'http': [ms], 'stdio': [ms]}"""
    out = {}
    log("HTTP rows: tools/call over stdio ...")
    m = start_stdio()
    try:
        wait_warm(m)
        call_stdio(m, code, expect)
        out["stdio"] = [call_stdio(m, code, expect) for _ in range(n)]
    finally:
        m.close()
    log("HTTP rows: tools/call over HTTP ...")
    srv = HttpServer(binary, ("--isolation", "warm", "--backend", "native"))
    try:
        time.sleep(15)  # the warm Sage worker starts and warms up (as wait_warm)
        c = HttpClient(srv)
        c.call(code, expect)
        out["http"] = [c.call(code, expect) for _ in range(n)]
    finally:
        srv.close()
    return out


def print_rows(res, pct, fmt_ms):
    print("| tools/call (self-test, warm, native, one client) | p50 | p95 |")
    print("|---|---:|---:|")
    for k, label in (("stdio", "stdio"), ("http", "Streamable HTTP, 2026-07-28, JSON answer, keep-alive")):
        print(f"| {label} | {fmt_ms(pct(res[k], 50))} | {fmt_ms(pct(res[k], 95))} |")
    print()
