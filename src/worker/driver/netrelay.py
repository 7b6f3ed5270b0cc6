"""The relay to the network proxy, when the user set `network`.

The sandbox has loopback only. The host binds this sandbox's own proxy
socket into it (SAGEBOX_NET_SOCKET, a Unix socket the proxy outside knows
as this sandbox); the relay, forked by the driver before any code runs,
listens on 127.0.0.1 at the port HTTP_PROXY names and splices each
connection to that socket. It adds no power: the code could connect to the
socket itself. It only lets pip, urllib, requests, curl and git find the
proxy by the usual variables. Without SAGEBOX_NET_SOCKET nothing starts."""
import os
import time

PID = 0            # the relay's pid, spared by the sweeps; 0: none
# Imported by start(), only with network: a worker carries into every
# job's fork what it imports (docs/WARM.md).
selectors = socket = None
CHUNK = 65536


def start():
    """Bind the port now (no code runs yet, so nothing else holds it),
    then fork the relay. Returns its pid, or 0 without network."""
    global PID, selectors, socket
    path = os.environ.pop("SAGEBOX_NET_SOCKET", None)
    url = os.environ.get("HTTP_PROXY", "")
    if not path or ":" not in url:
        return 0
    import selectors
    import socket
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
    _loop(ls, path)


# One thread, one epoll: a thread per connection (two, one per direction)
# cost two thread starts and GIL hand-overs on every request, and made the
# proxy's added time bimodal (~0.5 ms or ~3.3 ms p50 from run to run).
def _loop(ls, path):
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    lingering = set()
    while True:
        for key, ev in sel.select(1.0 if lingering else None):
            if key.data is None:
                _accept(sel, ls, path, lingering)
            else:
                pair, i = key.data
                pair.step(i, ev)
        now = time.monotonic()
        for pair in [p for p in lingering if p.deadline < now]:
            pair.close()


def _accept(sel, ls, path, lingering):
    while True:
        try:
            c, _ = ls.accept()
        except BlockingIOError:
            return
        except OSError:
            time.sleep(0.05)  # out of fds for a moment: the next event retries
            return
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            u.setblocking(False)
            u.connect(path)  # a Unix socket connects at once or fails (EAGAIN: backlog full)
        except OSError:
            c.close()
            u.close()
            continue
        c.setblocking(False)
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        _Pair(sel, c, u, lingering)


LINGER = 10.0  # seconds the client's bytes are dropped once the proxy is done


class _Pair:
    """A client connection (side 0) and its proxy connection (side 1):
    bytes read from one side wait in its buffer until the other side takes
    them; a side's EOF ends the other's write side once its buffer is empty.

    The proxy may answer before the client has sent everything (a refusal
    while a body is still coming) and close. Then its answer still goes to
    the client, whole: a side that can no longer be written to just stops
    getting bytes (what was meant for it is dropped), a reset read is an
    EOF after the bytes before it, and once the proxy's side is done the
    client's further bytes are read and dropped until its EOF (or LINGER
    seconds): closed with bytes unread, a TCP socket sends a reset, and the
    client would lose the answer it has not read yet. While the proxy still
    reads, it decides how long (it lingers too: net/proxy.c)."""

    def __init__(self, sel, c, u, lingering):
        self.sel = sel
        self.s = (c, u)
        self.buf = (bytearray(), bytearray())  # buf[i]: read from s[i], for s[1 - i]
        self.eof = [False, False]
        self.shut = [False, False]
        self.dead = [False, False]  # dead[i]: s[i] can no longer be written to
        self.mask = [0, 0]
        self.closed = False
        self.lingering = lingering
        self.deadline = None
        self._arm()

    def step(self, i, ev):
        if ev & selectors.EVENT_READ and not self.eof[i]:
            try:
                d = self.s[i].recv(CHUNK)
                if d:
                    if not self.dead[1 - i]:
                        self.buf[i].extend(d)
                else:
                    self.eof[i] = True
            except BlockingIOError:
                pass
            except OSError:
                self.eof[i] = True  # a reset: what came before it was read
        for j in (0, 1):
            k = 1 - j  # the side buf[j] goes to
            if self.buf[j] and not self.dead[k]:
                try:
                    del self.buf[j][:self.s[k].send(self.buf[j])]
                except BlockingIOError:
                    pass
                except OSError:
                    self.dead[k] = True
            if self.dead[k]:
                self.buf[j].clear()
            if self.eof[j] and not self.buf[j] and not self.shut[k] and not self.dead[k]:
                self.shut[k] = True
                try:
                    self.s[k].shutdown(socket.SHUT_WR)
                except OSError:
                    self.dead[k] = True
        done = [self.eof[i] and not self.buf[i] for i in (0, 1)]
        if self.dead[0] or (done[0] and done[1]):
            return self.close()  # the client has all it can get
        if self.dead[1] and done[1] and self.deadline is None:
            self.deadline = time.monotonic() + LINGER  # dropping the client's bytes, for a while
            self.lingering.add(self)
        self._arm()

    def _arm(self):
        for i in (0, 1):
            m = 0
            if not self.eof[i] and len(self.buf[i]) < CHUNK:
                m |= selectors.EVENT_READ
            if self.buf[1 - i] and not self.dead[i]:
                m |= selectors.EVENT_WRITE
            if m == self.mask[i]:
                continue
            if not self.mask[i]:
                self.sel.register(self.s[i], m, (self, i))
            elif not m:
                self.sel.unregister(self.s[i])
            else:
                self.sel.modify(self.s[i], m, (self, i))
            self.mask[i] = m

    def close(self):
        if self.closed:
            return
        self.closed = True
        self.lingering.discard(self)
        for i in (0, 1):
            if self.mask[i]:
                self.sel.unregister(self.s[i])
            self.s[i].close()
