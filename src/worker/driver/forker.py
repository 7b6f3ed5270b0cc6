"""The forker: a copy of the Python warm worker, made at its start, whose
only work is to fork the spares (the next jobs' children) on the worker's
request, reap them and report their wait statuses.

Why a process of its own: the pages a worker shares with the spare it just
forked are copy-on-write for both, and the worker runs Python between forks
(the relay, the frames, the reap): back to back, the Python worker took
~295 copy-on-write faults a call, each a page copied and, on a machine
with more than one CPU, the other CPUs' stale translations flushed. The
forker runs no Python at all (its loop is fork_loop.c): it writes to almost
nothing it shares with its children, and the worker, whose pages are no
longer shared with each new child, faults on its own writes once, not at
every call (docs/WARM.md, "The forker"). For the Sage worker, whose heap is
in huge pages, it measured slower on one machine kind and barely faster on
another: it forks its spares itself.

What it holds: the worker's memory as it was when the forker was made
(before its first job, its heap collapsed into huge pages), the fds a spare
needs (the jobs' cgroup, /dev/null), the worker's wake-up pipe (to tell it
a status is waiting) and its socket to the worker. Not the channel to the
host, not the janitor's pipes. It never sees a job's bytes: a request is
a small fixed record and the spare's ends of its pipes, passed as fds. It
is undumpable like the worker (a fork keeps that) and Landlock scopes
signals: a job cannot ptrace, patch or signal it. Where it is gone or
stuck (a kernel without signal scoping, a job that stopped it), the
worker forks its spares itself again, as before."""
import os
import struct
import sys

# _socket, not socket: a Python job starts without socket and selectors,
# as a fresh python3 -I does (tests/warm/test_footprint.py)
import _socket

# here, not in _spare: an import statement run in each new spare went
# through importlib's Python code (~60 copy-on-write faults a call)
from . import child

# worker -> forker: pretouch_after in seconds (-1: None), flags
REQUEST = struct.Struct("<dB")
TRACE = 1
# forker -> worker: b"P" pid 0 (the spare forked), b"S" pid status (reaped)
RECORD = struct.Struct("<cii")
# A spare's fds: job_r, out_w, err_w, disp_w, and trace_w when traced.
MAX_FDS = 5
# How long the worker waits for the forker's answer before it forks the
# spare itself (the forker may have been stopped).
ANSWER_TIMEOUT = 2.0


class ForkFailed(OSError):
    """The forker's fork(2) failed (out of pids or memory)."""


class Lost(Exception):
    """The forker did not answer a fork request (gone or stuck)."""


class Forker:
    """The worker's handle on its forker."""

    def __init__(self, pid, sock):
        self.pid, self.sock = pid, sock
        self.children = set()   # forked by it, not yet reported reaped

    def fork(self, fds, pretouch_after, trace, reaped):
        """The pid of a new spare holding fds (sent, not kept: the caller
        closes its copies), or None when the forker did not answer."""
        flags = TRACE if trace else 0
        after = -1.0 if pretouch_after is None else float(pretouch_after)
        try:
            self.sock.settimeout(ANSWER_TIMEOUT)
            rights = struct.pack("%di" % len(fds), *fds)
            self.sock.sendmsg([REQUEST.pack(after, flags)], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            while True:
                rec = self.sock.recv(RECORD.size)
                if len(rec) != RECORD.size:
                    return None   # gone
                kind, pid, status = RECORD.unpack(rec)
                if kind == b"S":
                    self._reaped(pid, status, reaped)
                elif kind == b"P" and pid < 0:
                    raise ForkFailed(-pid)
                elif kind == b"P":
                    self.children.add(pid)
                    return pid
        except ForkFailed:
            raise
        except OSError:
            return None

    def drain(self, reaped):
        """The statuses it reported meanwhile, into reaped. False when the
        forker is gone."""
        try:
            self.sock.settimeout(0)
            while True:
                rec = self.sock.recv(RECORD.size)
                if len(rec) != RECORD.size:
                    return False
                kind, pid, status = RECORD.unpack(rec)
                if kind == b"S":
                    self._reaped(pid, status, reaped)
        except BlockingIOError:
            return True
        except OSError:
            return False

    def _reaped(self, pid, status, reaped):
        self.children.discard(pid)
        reaped[pid] = status

    def close(self):
        self.sock.close()
        self.children.clear()


def load():
    """The forker's start, a ctypes function, or None where it cannot be
    loaded (a driver without the bundle's library, no memfd): the worker
    then forks its spares itself. Loaded by the worker at its start."""
    import ctypes
    try:
        from . import fork_loop_so
    except ImportError:
        return None
    from .memory import load_library
    lib = load_library(fork_loop_so.data(), "sagebox-fork-loop")[0]
    if lib is None:
        return None
    fn = lib.sagebox_forker_start
    p_int = ctypes.POINTER(ctypes.c_int)
    fn.argtypes = (ctypes.POINTER(ctypes.c_ulong), ctypes.c_int, ctypes.c_int, ctypes.c_int, p_int,
                   ctypes.c_int, p_int, p_int, ctypes.POINTER(ctypes.c_double), p_int)
    fn.restype = ctypes.c_int
    return fn


def start(w, start_fn):
    """Fork the forker from the worker w: a Forker, or None when it could
    not be made (the worker then forks its spares itself). Returns only in
    the worker: in a spare the forker forks, this call becomes that
    spare (child.run, which never returns)."""
    import ctypes
    from .memory import heap_chunks
    try:
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    except OSError:
        return None
    ranges = [x for r in heap_chunks() for x in r]
    ranges_arr = (ctypes.c_ulong * len(ranges))(*ranges)
    # Stops: a spare (and so a job) inheriting the channel to the host or
    # the janitor's pipes, which the worker's own spares close first thing.
    close = [fd for fd in w.private if fd not in (w.job_cgroup, w.wake_w)] + [ours.fileno()]
    close_arr = (ctypes.c_int * len(close))(*close)
    fds = (ctypes.c_int * MAX_FDS)()
    nfds, flags, after = ctypes.c_int(), ctypes.c_int(), ctypes.c_double()
    for f in (sys.stdout, sys.stderr):
        f.flush()
    # Looked up here, once: in each spare, the lookup (ctypes makes and
    # caches a function object for the name) cost ~110 copy-on-write
    # faults, ~8 ms of CPU a call on a machine where page faults are dear
    # (docs/WARM.md), where calling it costs ~20.
    after_fork = ctypes.pythonapi.PyOS_AfterFork_Child
    # The forker is fork(2)ed from here, and its spares from it, so the
    # interpreter's locks are taken around it exactly as os.fork takes
    # them: from Python 3.13 on, PyOS_AfterFork_Child in a spare releases
    # the locks PyOS_BeforeFork took, and aborts ("unlocking mutex that is
    # not locked") when they were never taken.
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = start_fn(ranges_arr, len(ranges) // 2, theirs.fileno(), w.wake_w, close_arr, len(close), fds, ctypes.byref(nfds),
                   ctypes.byref(after), ctypes.byref(flags))
    if pid == 0:
        _spare(w, after_fork, ours, theirs, fds, nfds.value, after.value, flags.value)
    api.PyOS_AfterFork_Parent()
    theirs.close()
    if pid < 0:
        ours.close()
        return None
    return Forker(pid, ours)


def _spare(w, after_fork, ours, theirs, fds, nfds, after, flags):
    """A spare, just forked by the forker: what os.fork's child does after
    fork(2) (after_fork: PyOS_AfterFork_Child; the forker is one thread:
    nothing else to do before it), then the spare's own life. Its fds: the
    forker closed the worker's and its own (the sockets' numbers are gone:
    detached, never closed again)."""
    after_fork()
    ours.detach()
    theirs.detach()
    trace = flags & TRACE
    if nfds != 4 + (1 if trace else 0):
        os._exit(0)
    child.run(w, w.base, tuple(fds[:4]), [], None if after < 0 else after,
              fds[4] if trace else -1)
