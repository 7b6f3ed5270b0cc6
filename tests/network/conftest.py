"""The network proxy driven through its Unix socket by real
clients (raw sockets, urllib, curl) against real servers on loopback. The
proxy resolves names from a test hosts file: each proxy runs in its own
mount namespace with that file bound over /etc/hosts (no hook in the code)."""
import http.server
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest
from netorigin import Origin  # noqa: F401 (test_inside.py imports it from here)

BIN = os.environ.get("SAGEBOX_BIN", "/work/main/build/sagebox")


@pytest.fixture(scope="session")
def origin():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv.server_address[1]
    srv.shutdown()


HOSTS = """127.0.0.1 localhost
127.0.0.1 exact.test a.wild.test wild.test loop.test oeis.org
169.254.169.254 meta.test
10.1.2.3 lan.test
"""


class Proxy:
    def __init__(self, tmp, network):
        if os.geteuid() != 0:
            pytest.skip("needs root: the proxy's hosts file is bound over /etc/hosts in a mount namespace")
        if not shutil.which("unshare"):
            pytest.skip("needs unshare (util-linux)")
        self.sock = str(tmp / "proxy.sock")
        self.audit = tmp / "audit.jsonl"
        hosts = tmp / "hosts"
        hosts.write_text(HOSTS)
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount --bind "$1" /etc/hosts && exec "$2" proxy --network "$3" --listen "$4" --audit-log "$5"',
             "sh", str(hosts), BIN, network, self.sock, str(self.audit)],
            stderr=subprocess.PIPE, text=True)
        # (its socket appears once it listens; 15 s: an ASan build on a
        # loaded machine starts slowly)
        for _ in range(300):
            if os.path.exists(self.sock) or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not os.path.exists(self.sock):
            self.proc.kill()
            self.proc.wait()
        assert os.path.exists(self.sock), f"the proxy did not start in 15 s: {self.proc.stderr.read()}"

    def raw(self, data, timeout=10):
        """Send data on a fresh connection; return all the proxy answers."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        try:
            s.connect(self.sock)
        except OSError as e:
            s.close()
            alive = self.proc.poll() is None
            raise AssertionError(f"cannot connect to the proxy: {e}; the proxy is "
                                 + ("running" if alive else f"gone (exit {self.proc.returncode}): "
                                    f"{self.proc.stderr.read()}")) from e
        s.sendall(data)
        out = b""
        while True:
            x = s.recv(65536)
            if not x:
                break
            out += x
        s.close()
        return out

    def audit_lines(self):
        import json
        return [json.loads(l) for l in self.audit.read_text().splitlines()] if self.audit.exists() else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture
def proxy(tmp_path):
    made = []

    def make(network):
        p = Proxy(tmp_path, network)
        made.append(p)
        return p
    yield make
    for p in made:
        p.stop()


def loopback_server(on_connection):
    """A socket listening on 127.0.0.1 (its port: getsockname()[1]) whose
    connections go to on_connection(sock), each on a thread of its own.
    Closing it stops the accepting."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=on_connection, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return srv


class Relay:
    """What the relay inside a sandbox does: 127.0.0.1:PORT to the proxy's
    Unix socket, so ordinary clients (urllib, curl) can use it."""

    def __init__(self, sock_path):
        self.path = sock_path
        self.srv = loopback_server(self.pair)
        self.port = self.srv.getsockname()[1]

    def pair(self, c):
        u = socket.socket(socket.AF_UNIX)
        u.connect(self.path)
        for a, b in ((c, u), (u, c)):
            threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    @staticmethod
    def pump(a, b):
        try:
            while True:
                x = a.recv(65536)
                if not x:
                    break
                b.sendall(x)
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self):
        self.srv.close()
