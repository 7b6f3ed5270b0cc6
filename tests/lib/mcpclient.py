"""A tiny MCP client over stdio (newline-delimited JSON-RPC), enough to drive
`sagebox mcp` from tests and the benchmark: initialize, tools/call (several
in flight from threads), notifications/cancelled. The result of a run tool is
the structuredContent object (protocol 2025-06-18): the same JSON as
`sagebox run --json`."""
import json
import os
import subprocess
import threading
import time

PROTOCOL = "2025-06-18"
TOOLS = {"sage": "run_sagemath", "python": "run_python", "shell": "run_shell"}


class MCP:
    def __init__(self, binary, args=(), env=None, prefix=()):
        """prefix: a command the server runs under (e.g. runuser ... env -i)."""
        e = dict(os.environ)
        e.update(env or {})
        self.proc = subprocess.Popen([*prefix, binary, "mcp", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.cv = threading.Condition(self.lock)
        self.replies = {}
        self.next_id = 0
        self.stderr = b""
        threading.Thread(target=self._reader, daemon=True).start()
        threading.Thread(target=self._errs, daemon=True).start()
        self.initialized = self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                                       "clientInfo": {"name": "sagebox-warm-tests",
                                                                      "version": "1"}})
        self.notify("notifications/initialized", {})

    def _reader(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg and ("result" in msg or "error" in msg):
                with self.cv:
                    self.replies[msg["id"]] = msg
                    self.cv.notify_all()
        with self.cv:
            self.replies[None] = "eof"
            self.cv.notify_all()

    def _errs(self):
        for line in self.proc.stderr:
            self.stderr += line

    def _send(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def send_request(self, method, params):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def wait(self, rid, timeout=300):
        deadline = time.monotonic() + timeout
        with self.cv:
            while rid not in self.replies:
                if None in self.replies:
                    raise RuntimeError("server exited: " + self.stderr.decode(errors="replace")[-2000:])
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no reply to request {rid}")
                self.cv.wait(left)
            return self.replies.pop(rid)

    def request(self, method, params, timeout=300):
        msg = self.wait(self.send_request(method, params), timeout)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg["result"]

    def call(self, tool, args, timeout=300):
        return self.request("tools/call", {"name": tool, "arguments": args}, timeout)

    def run(self, code, lang="python", timeout_s=None, timeout=300):
        """Run code; returns the result object (structuredContent)."""
        args = {"code": code}
        if timeout_s:
            args["timeout_seconds"] = timeout_s
        r = self.call(TOOLS[lang], args, timeout)
        return r.get("structuredContent") or {"text": r["content"][0]["text"], "isError": r.get("isError")}

    def status(self):
        r = self.call("sandbox_status", {})
        return r.get("structuredContent") or json.loads(r["content"][0]["text"])

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
