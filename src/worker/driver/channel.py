"""Framing, both ways (host <-> worker, worker -> a job's child): a 4-byte
big-endian length, then that many bytes: a one-line JSON header and, for
frames that carry bytes, "\\n" and the bytes.

A job's own bytes (its code, its output) never pass through this process's
memory: they are moved between fds with splice(2) (splice_exact,
Channel.send_spliced). Whatever the worker held would be inherited, freed
but not cleared, by every later job's child, which is a fork of the worker."""
import os

# The largest frame the host may send (a run frame of the old format carried
# the code inside; protocol v2 sends it raw after the frame).
MAX_FRAME_IN = 64 << 20
# A frame's length prefix.
LEN_BYTES = 4
# The most one splice(2) call is asked to move.
SPLICE_MAX = 1 << 20


class Malformed(ValueError):
    """A frame that breaks the framing: the sender is broken or hostile."""


def _splice(src, dst, n):
    if hasattr(os, "splice"):  # Python 3.10
        return os.splice(src, dst, n)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.splice.restype = ctypes.c_ssize_t
    r = libc.splice(ctypes.c_int(src), None, ctypes.c_int(dst), None, ctypes.c_size_t(n), ctypes.c_uint(0))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def splice_exact(src, dst, n):
    """Move exactly n bytes from src to dst (one of them a pipe) inside the
    kernel. EOFError when src ends first; BrokenPipeError when dst's reader
    is gone."""
    while n > 0:
        k = _splice(src, dst, min(n, SPLICE_MAX))
        if k == 0:
            raise EOFError("the sender closed the channel")
        n -= k


def discard(src, n):
    """Consume n bytes of src without reading them into memory (the code of
    a job whose child died before it was handed over): through a pipe into
    /dev/null, both moves inside the kernel."""
    r, w = os.pipe2(os.O_CLOEXEC)
    null = os.open("/dev/null", os.O_WRONLY | os.O_CLOEXEC)
    try:
        while n > 0:
            k = _splice(src, w, min(n, 1 << 16))
            if k == 0:
                raise EOFError("the sender closed the channel")
            splice_exact(r, null, k)
            n -= k
    finally:
        for fd in (r, w, null):
            os.close(fd)


def pending(fd):
    """How many bytes wait in the pipe fd (FIONREAD)."""
    import fcntl
    import struct
    import termios
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def wait_readable(fds, timeout):
    """poll(2) for input on fds (a negative one is skipped) for timeout
    seconds (None: until one is ready): the (fd, events) pairs."""
    import select
    p = select.poll()
    for fd in fds:
        if fd >= 0:
            p.register(fd, select.POLLIN)
    return p.poll(None if timeout is None else int(timeout * 1000) + 1)


def write_all(fd, data):
    """All of data to fd (a pipe may take less than asked in one write)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def text(s):
    """s as text any JSON reader takes: a lone surrogate is no Unicode
    character, and the host's reader (jansson) refuses a header holding one
    ("\\udcff"), which ends the session. Names of files are where they come
    from (os.fsdecode of bytes that are not UTF-8): each such byte is shown
    as \\xNN (files.split takes that form back); any other lone surrogate
    becomes U+FFFD."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        pass
    out = []
    for ch in s:
        o = ord(ch)
        out.append("\\x%02x" % (o - 0xDC00) if 0xDC80 <= o <= 0xDCFF
                   else "\ufffd" if 0xD800 <= o <= 0xDFFF else ch)
    return "".join(out)


def _clean(v):
    if isinstance(v, str):
        return text(v)
    if isinstance(v, dict):
        return {text(k) if isinstance(k, str) else k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def header(hdr):
    """A frame's JSON header as bytes. Whatever the session's code made of
    a string in it (a file's name, a path, an error's text), the host can
    read it (a file named b"\\xff" broke the session's frames)."""
    import json
    body = json.dumps(hdr, separators=(",", ":"))
    if "\\ud" in body:  # a surrogate's escape: a pair (fine) or a lone one
        body = json.dumps(_clean(hdr), separators=(",", ":"))
    return body.encode("ascii")


def encode(hdr, payload=b""):
    """One frame as bytes."""
    import struct
    body = header(hdr)
    if payload:
        body += b"\n" + payload
    return struct.pack(">I", len(body)) + body


def decode_body(body):
    """(header, payload) of a frame's body; Malformed unless the header is a
    JSON object."""
    import json
    head, _, payload = body.partition(b"\n")
    try:
        hdr = json.loads(head)
    except (ValueError, UnicodeDecodeError) as e:
        raise Malformed("frame header is not JSON: %s" % e) from None
    if not isinstance(hdr, dict):
        raise Malformed("frame header is not an object")
    return hdr, payload


class Channel:
    def __init__(self, rfd, wfd, max_in=MAX_FRAME_IN):
        self.rfd, self.wfd, self.max_in = rfd, wfd, max_in

    def _write(self, data):
        write_all(self.wfd, data)

    def send(self, hdr, payload=b""):
        self._write(encode(hdr, payload))

    def send_spliced(self, hdr, src, n):
        """A frame whose n payload bytes are moved from the pipe src (where
        at least n wait: see pending) straight to the channel."""
        import struct
        head = header(hdr) + b"\n"
        self._write(struct.pack(">I", len(head) + n) + head)
        splice_exact(src, self.wfd, n)

    def exact(self, n):
        """Read exactly n bytes (never more: what follows a frame may be raw
        bytes for someone else). EOFError at the end of the channel."""
        buf = bytearray()
        while len(buf) < n:
            b = os.read(self.rfd, min(n - len(buf), 1 << 20))
            if not b:
                raise EOFError("the sender closed the channel")
            buf += b
        return bytes(buf)

    def recv(self):
        """The next frame: (header dict, payload bytes)."""
        import struct
        (n,) = struct.unpack(">I", self.exact(LEN_BYTES))
        if n > self.max_in:
            raise Malformed("frame of %d bytes (limit %d)" % (n, self.max_in))
        return decode_body(self.exact(n))
