"""What the network tests (tests/network, tests/podman/test_network.py)
share: the origin server on the host's loopback, which a sandbox reaches
only through sagebox's proxy, the code that fetches a URL from inside, and
the helpers of the code that tries to get around the proxy."""
import hashlib
import http.server


def big(n):
    """The body of /big/N: N bytes of a pattern the code inside can check."""
    return (b"0123456789abcdef" * (n // 16 + 1))[:n]


# What oeis.org answers a search in its text format (fmt=text), shortened:
# Sage's oeis() parses it.
OEIS_SEARCH = """# Greetings from The On-Line Encyclopedia of Integer Sequences! http://oeis.org/

Search: seq:1,1,2,5,14,42
Showing 1-1 of 1

%I A000108 M1459 N0577 #1000
%S A000108 1,1,2,5,14,42,132,429,1430,4862,16796,58786,208012,742900,2674440,
%N A000108 Catalan numbers: C(n) = binomial(2n,n)/(n+1) = (2n)!/(n!(n+1)!).
%O A000108 0,3
%K A000108 core,nonn,easy,nice
%A A000108 _N. J. A. Sloane_

# Content is available under The OEIS End-User License Agreement: http://oeis.org/LICENSE
"""


class Origin(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        """Answers the SHA-256 of the body it read (an upload's check)."""
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        digest = hashlib.sha256(body).hexdigest().encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(digest)))
        self.end_headers()
        self.wfile.write(digest)

    def do_GET(self):
        if self.path.startswith("/search?"):
            body = OEIS_SEARCH.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/big/"):
            body = big(int(self.path[5:]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://refused.test/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = f"hello from origin {self.path} host={self.headers.get('Host')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


# Python run inside: prints the body, "CODE BODY" for an HTTP error, or FAILED.
GET = """
import urllib.request, urllib.error
try:
    print(urllib.request.urlopen({url!r}, timeout=20).read().decode(), end="")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode(), end="")
except Exception as e:
    print("FAILED", type(e).__name__, e)
"""

# Python run inside, before a probe: tcp(addr) and udp(addr) say CONNECTED,
# ANSWERED or the error's name; q is a DNS query for exact.test.
AROUND = """
import os, socket
def tcp(addr):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(addr); return "CONNECTED"
    except OSError as e:
        return type(e).__name__
def udp(addr, data=b"x"):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
    try:
        s.sendto(data, addr); s.recvfrom(512); return "ANSWERED"
    except OSError as e:
        return type(e).__name__
q = bytes.fromhex("12340100000100000000000005657861637404746573740000010001")
"""


def check_gets(servers, origin):
    """urllib and curl from inside each server's sandbox reach the listed
    origin (as exact.test) through the proxy."""
    for m in servers:
        r = m.run(GET.format(url=f"http://exact.test:{origin}/in"), "python")
        assert r.get("stdout") == f"hello from origin /in host=exact.test:{origin}\n", r
        r = m.run(f"curl -sS http://exact.test:{origin}/curl", "shell")
        assert r.get("stdout") == f"hello from origin /curl host=exact.test:{origin}\n", r


def check_session_get(m, origin):
    """The same from a python session's sandbox; its id."""
    sid = m.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
    try:
        r = m.call("run_python", {"session_id": sid, "code": GET.format(url=f"http://exact.test:{origin}/s")})
        assert r["structuredContent"]["stdout"] == f"hello from origin /s host=exact.test:{origin}\n", r
    finally:
        m.call("session_close", {"session_id": sid})
    return sid


def origin_server():
    """An Origin on 127.0.0.1, served by a thread: a fixture yields its
    port and shuts it down."""
    import threading
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()
