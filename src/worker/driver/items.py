"""What a job displays, on its way out of the sandbox: every item (a figure,
text, LaTeX, HTML, SVG, a 3D scene) is one record on the job's display pipe,
never on stdout or stderr, under the caps of its class:

    record := length (4 bytes, big-endian) body
    body   := b"D" kind payload       an item; a figure's payload is N
                                      (4 bytes, big-endian: the
                                      figure-N.png a session saved it as,
                                      0: none), then the PNG
            | b"X" kind reason        one not sent: b"c" over its class's
                                      count, b"i" too big (a figure: even
                                      when shrunk), b"t" over what is left
                                      of the class's total
            | b"E" kind               the items since the last of kind
                                      were its own (an interact's first
                                      rendering: interact.py)

The kinds (their bytes and classes) and the caps come from the host in the
job's run frame ("display": core/display_kinds.c and core/display_caps.c,
one table each). The driver applies the caps to keep the stream small; the
host applies them again and checks every item (runner/display_stream.c),
since the job's own code can write anything to the pipe. figures.py makes
the figures, display.py the rest (Sage's display manager)."""
import os
import struct

_out = None  # the job's Sender; None: nothing is collected


def current():
    """The job's Sender, or None when the job collects nothing (a
    background job, or between a session's calls)."""
    return _out


class Sender:
    def __init__(self, fd, caps, save_dir=None):
        self.fd, self.save_dir = fd, save_dir
        self.ident = _identity(fd)
        self.max_side = int(caps["max_side"])
        # class name: (max_count, max_one_bytes, max_total_bytes)
        self.caps = {name: tuple(int(v) for v in c) for name, c in caps["classes"].items()}
        # kind name: (its byte, its class)
        self.kinds = {name: (w.encode("latin-1"), c) for name, (w, c) in caps["kinds"].items()}
        self.sent = {name: [0, 0] for name in self.caps}  # per class: count, bytes
        # Called before each record (an interact's rendering sends the text
        # its function printed first, interact.py); None: nothing to do.
        self.before_record = None

    def _record(self, body):
        before, self.before_record = self.before_record, None
        if before is not None:
            try:
                before()
            finally:
                self.before_record = before
        data = memoryview(struct.pack(">I", len(body)) + body)
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass  # the pipe is gone (the job closed it, or the worker): nothing to show

    def room(self, kind):
        """(whether one more of kind's class fits the count, its bytes
        left of the total, the most one may have); None: an unknown kind."""
        if kind not in self.kinds:
            return None
        count, one, total = self.caps[self.kinds[kind][1]]
        n, used = self.sent[self.kinds[kind][1]]
        return n < count, total - used, one

    def skip(self, kind, reason):
        """Say that an item of kind was not sent: b"c", b"i" or b"t"."""
        self._record(b"X" + self.kinds[kind][0] + reason)

    def send(self, kind, payload, counted):
        """Send an item whose caps the caller checked; counted: the bytes
        of it the caps count."""
        wire, cls = self.kinds[kind]
        self.sent[cls][0] += 1
        self.sent[cls][1] += counted
        self._record(b"D" + wire + payload)

    def end_group(self, kind):
        """The items of the last item of kind (an interact) are over: not
        an item, no cap."""
        if kind in self.kinds:
            self._record(b"E" + self.kinds[kind][0])

    def item(self, kind, data):
        """Send one item (bytes) under its class's caps, or say why not.
        True when sent."""
        room = self.room(kind)
        if room is None:
            return False
        fits, left, one = room
        if not fits:
            self.skip(kind, b"c")
        elif len(data) > one:
            self.skip(kind, b"i")
        elif len(data) > left:
            self.skip(kind, b"t")
        else:
            self.send(kind, data, len(data))
            return True
        return False


def begin(fd, caps, save_dir=None, keep_fd=False):
    """In a job's child: items go to fd (close-on-exec, so no program the
    job runs inherits it). caps None: the host wants none. A session's
    interpreter calls it for each call (keep_fd: the fd outlives the call)
    with its workspace as save_dir, and end() after the call."""
    global _out
    if caps is None:
        if not keep_fd:
            os.close(fd)
        return
    _out = Sender(fd, caps, save_dir)


def end():
    """The call is over: nothing is collected any more (a background job
    forked from a session's interpreter sends none)."""
    global _out
    _out = None


def close():
    """A job's child is about to _exit (its exit handlers ran): close the
    display pipe now, as its fds 1 and 2, so that the worker sees the end
    of the job at once. Left to _exit, the pipe would close only after the
    kernel tore down the child's copy of the worker's memory (~10 ms for
    Sage). Only if the fd is still that pipe: the job may have closed it
    and opened something else under its number."""
    global _out
    out, _out = _out, None
    if out is not None and out.ident is not None and _identity(out.fd) == out.ident:
        try:
            os.close(out.fd)
        except OSError:
            pass


def _identity(fd):
    """(device, inode) of what fd refers to, or None."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
