#!/usr/bin/python3
"""What the network proxy costs a request (at most 1 ms more at
p50 than the same request straight to loopback).

    bench/net_proxy.py [--n 200] [--bin build/sagebox]

An origin on the host's loopback; the same raw HTTP/1.1 GET (a new
connection each, read to the end) timed N times from the host straight to
it, and N times from inside a warm sandbox of `sagebox mcp --network
127.0.0.1:PORT` through the relay on 127.0.0.1:3128, the sandbox's socket
and the proxy. Prints both p50 and p95 and the difference."""
import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from mcpclient import MCP  # noqa: E402


def origin():
    """A minimal origin on the host's loopback: reads a request head, sends
    a fixed 100-byte answer and closes (little of its own time in the
    figures)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    answer = b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100

    def serve(c):
        with c:
            head = b""
            while b"\r\n\r\n" not in head:
                d = c.recv(4096)
                if not d:
                    return
                head += d
            c.sendall(answer)

    def loop():
        while True:
            c, _ = srv.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return srv.getsockname()[1]


CLIENT = r"""
import socket, time, json
def once(addr, req):
    t = time.perf_counter()
    s = socket.create_connection(addr)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(req)
    n = 0
    while True:
        d = s.recv(65536)
        if not d:
            break
        n += len(d)
    s.close()
    assert n > 100, n
    return (time.perf_counter() - t) * 1000
def series(addr, req, n):
    for _ in range(5):
        once(addr, req)
    return sorted(once(addr, req) for _ in range(n))
"""


def pct(xs, p):
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def measure(binary, n, env=None):
    """(host straight to loopback, inside a warm sandbox through the relay
    and the proxy): two sorted lists of N request times in ms."""
    port = origin()
    ns = {}
    exec(CLIENT, ns)
    direct = ns["series"](("127.0.0.1", port),
                          f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode(), n)
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
    with MCP(os.path.abspath(binary), ["--network", f"127.0.0.1:{port}"], env=env) as m:
        code = CLIENT + (f"print(json.dumps(series(('127.0.0.1', 3128), b'GET http://127.0.0.1:{port}/ HTTP/1.1"
                         f"\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n', {n})))")
        r = m.run(code, "python", timeout_s=300)
        if not r.get("stdout"):
            raise RuntimeError(f"the run inside failed: {json.dumps(r)[:2000]}")
        inside = json.loads(r["stdout"])
    return direct, inside


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--bin", default=os.environ.get("SAGEBOX_BIN", "build/sagebox"))
    a = ap.parse_args()
    try:
        direct, inside = measure(a.bin, a.n)
    except RuntimeError as e:
        sys.exit(str(e))
    d50, i50 = statistics.median(direct), statistics.median(inside)
    print(f"straight to loopback (host):  p50 {d50:.3f} ms  p95 {pct(direct, 0.95):.3f} ms  (n={a.n})")
    print(f"through the proxy (sandbox):  p50 {i50:.3f} ms  p95 {pct(inside, 0.95):.3f} ms  (n={a.n})")
    print(f"the proxy adds {i50 - d50:.3f} ms at p50 (target: <= 1 ms): {'met' if i50 - d50 <= 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
