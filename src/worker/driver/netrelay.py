"""The relay to the network proxy (issue 26), when the user set `network`.

The sandbox has loopback only. The host binds this sandbox's own proxy
socket into it (SAGEBOX_NET_SOCKET, a Unix socket the proxy outside knows
as this sandbox); the relay, forked by the driver before any code runs,
listens on 127.0.0.1 at the port HTTP_PROXY names and splices each
connection to that socket. It adds no power: the code could connect to the
socket itself. It only lets pip, urllib, requests, curl and git find the
proxy by the usual variables. Without SAGEBOX_NET_SOCKET nothing starts."""
import os
import socket
import threading

PID = 0            # the relay's pid, spared by the sweeps; 0: none
CHUNK = 65536


def start():
    """Bind the port now (no code runs yet, so nothing else holds it),
    then fork the relay. Returns its pid, or 0 without network."""
    global PID
    path = os.environ.pop("SAGEBOX_NET_SOCKET", None)
    url = os.environ.get("HTTP_PROXY", "")
    if not path or ":" not in url:
        return 0
    port = int(url.rsplit(":", 1)[1].strip("/"))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(64)
    pid = os.fork()
    if pid == 0:
        try:
            _child(ls, path)
        finally:
            os._exit(0)
    ls.close()
    PID = pid
    return pid


def pids():
    return {PID} if PID else set()


def _child(ls, path):
    # None of the driver's fds (its channel to the host above all): only
    # the listening socket, and /dev/null for 0-2.
    keep = ls.fileno()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    os.setsid()
    try:
        from .confine import libc
        libc().prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL: never outlives the driver
    except OSError:
        pass
    threading.stack_size(256 << 10)
    while True:
        try:
            c, _ = ls.accept()
        except OSError:
            import time
            time.sleep(0.05)  # out of fds for a moment
            continue
        try:
            threading.Thread(target=_pair, args=(c, path), daemon=True).start()
        except RuntimeError:
            c.close()


def _pair(c, path):
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.connect(path)
    except OSError:
        c.close()
        u.close()
        return
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pump, args=(u, c), daemon=True)
    back.start()
    _pump(c, u)
    back.join()
    c.close()
    u.close()


def _pump(a, b):
    """a's bytes to b until a's end; then b's write side ends too. An error
    either way ends both directions."""
    try:
        while True:
            d = a.recv(CHUNK)
            if not d:
                break
            b.sendall(d)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
