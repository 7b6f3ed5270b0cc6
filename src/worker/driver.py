# sagebox driver: runs INSIDE the sandbox, never on the host.
#
#   python3 -I -c <this source> once LANG [SHELL]
#       Read the job's code from stdin until EOF, then run it as LANG
#       (sage, python or shell) in this process, the seed's way: one
#       sandbox per call.
#
#   python3 -I -c <this source> worker KIND SHELL OWN_PIDNS WARM_BUDGET_MIB
#       A warm worker (KIND sage or python): import once, then fork one
#       child per job, speaking the framed protocol on stdin/stdout (see
#       run_worker below and docs/WARM.md).
#
# Sage code is preparsed as `sage -q file.sage` does (R.<x> = QQ[] works).
# When the last statement of a Sage or Python cell is a bare expression, its
# value is displayed as the REPL does; a trailing ';' suppresses that.
import ast
import io
import os
import sys
import tokenize

CELL = "<cell>"


def _read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _ends_with_semicolon(src):
    """True when the last significant token of src is ';'."""
    last = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                            tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
                continue
            last = tok
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def compile_cell(src):
    """Compile a cell; a final bare expression is displayed."""
    tree = ast.parse(src, CELL, "exec")
    display = (tree.body and isinstance(tree.body[-1], ast.Expr)
               and not _ends_with_semicolon(src))
    if display:
        last = tree.body.pop()
        body = compile(tree, CELL, "exec")
        expr = compile(ast.Expression(last.value), CELL, "eval")
        return body, expr
    return compile(tree, CELL, "exec"), None


def _show(value):
    if value is None:
        return
    import builtins
    builtins._ = value
    sys.stdout.write(repr(value) + "\n")


def _print_user_traceback():
    import traceback
    etype, value, tb = sys.exc_info()
    # Skip the driver's own frames: show the user only their code.
    while tb is not None and tb.tb_frame.f_code.co_filename != CELL:
        tb = tb.tb_next
    traceback.print_exception(etype, value, tb)


def run_cell(src, glb):
    """Run src in glb. Returns the process exit status it asks for."""
    import linecache
    linecache.cache[CELL] = (len(src), None, src.splitlines(True), CELL)
    try:
        body, expr = compile_cell(src)
        exec(body, glb)
        if expr is not None:
            _show(eval(expr, glb))
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(str(code) + "\n")
        return 1
    except BaseException:
        _print_user_traceback()
        return 1
    finally:
        try:
            sys.stdout.flush()
        except Exception:
            pass
    return 0


def sage_globals():
    # What `sage -q` gives a script: everything of sage.all_cmdline.
    import sage.all_cmdline as allc
    glb = {k: v for k, v in vars(allc).items() if not k.startswith("__")}
    glb["__name__"] = "__main__"
    glb["__builtins__"] = __builtins__
    return glb


def python_globals():
    return {"__name__": "__main__", "__builtins__": __builtins__}


def sage_preparse(src):
    from sage.repl.preparse import preparse_file
    return preparse_file(src)


def prepare_dirs():
    # The backend starts us in the job's working directory.
    for d in (os.environ.get("HOME"), os.environ.get("DOT_SAGE")):
        if d:
            os.makedirs(d, mode=0o700, exist_ok=True)


def run_once(lang, shell):
    code = _read_all(0).decode("utf-8", "replace")
    # The user's code gets an empty stdin, not the channel its code came on.
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    prepare_dirs()
    return run_code(lang, code, shell, sage_globals)


def run_code(lang, code, shell, make_sage_globals):
    """Run one job's code in this process, the same way in once mode and in
    a warm worker's child: a shell script is exec'd from the work dir; Sage
    is preparsed and run in make_sage_globals() (None: cannot, exit 1);
    Python runs in fresh globals."""
    if lang == "shell":
        path = os.path.join(os.getcwd(), ".sagebox-script.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        os.execv(shell, [shell, path])
    if lang == "sage":
        glb = make_sage_globals()
        if glb is None:
            return 1
        try:
            src = sage_preparse(code)
        except Exception:
            _print_user_traceback()
            return 1
    else:
        glb = python_globals()
        src = code
    return run_cell(src, glb)


# ---------------------------------------------------------------- worker mode
#
# The warm worker runs as the sandbox's command. It imports once, then forks
# one child per job and never runs user code itself. Frames, both ways: a
# 4-byte big-endian length, then that many bytes: a one-line JSON header and,
# for frames that carry bytes, "\n" and the bytes.
#   host -> worker:  run {id, lang, timeout_ms, max_output, limits} + code
#                    cancel {id}
#   worker -> host:  ready {pid, kind, python, sage, import_error}   (once)
#                    started {id}        the child is forked: the job began
#                    out {id, stream} + bytes
#                    done {id, exit_code, signal, timed_out, cancelled, flooded}
# The host trusts none of it beyond one job: it keeps its own deadline and
# caps, and kills the whole sandbox when the worker misbehaves.

FD_FLOOR = 200          # protocol fds are moved up here, away from 0-2
MAX_FRAME_IN = 64 << 20
CHUNK = 1 << 16
EXIT_GRACE = 0.3        # as the fresh runner: pipes held open after the exit
REAP_GRACE = 2.0
IDLE_BEFORE_WARMUP = 0.05
PR_SET_DUMPABLE = 4
MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
PR_SET_CHILD_SUBREAPER = 36
SYS_LANDLOCK_CREATE_RULESET = 444   # the same number on every architecture
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1
LANDLOCK_SCOPE_SIGNAL = 2

# What Sage does slowly the first time, done once in the worker so that no
# job pays for it: the first factor, the first plot (matplotlib, fonts), the
# first symbolic integral (Maxima on ECL), numerics, linear algebra.
SAGE_WARMUPS = (
    "R.<x> = QQ[]\nfactor(x^4 - 1)\n",
    "import io\n_b = io.BytesIO()\n"
    "plot(sin(x), (x, 0, 1)).matplotlib().savefig(_b, format='png')\n",
    "integrate(x^2, x); solve(x^2 - 2 == 0, x); simplify(sin(x)^2 + cos(x)^2)\n",
    "matrix(QQ, 3, 3, range(9)).eigenvalues(); find_root(x^2 - 2, 0, 2)\n",
    "N(pi, 50); is_prime(2^61 - 1); var('y'); diff(sin(x*y), x)\n",
)


# Run by each pre-forked Sage child before its job (see _pretouch).
PRETOUCH = "R.<x> = QQ[]\nprint(factor(x^4 - 1))\nprint(2^10, 1/3 + 1/6, sqrt(2).n())\n"


class _Channel:
    def __init__(self, rfd, wfd):
        self.rfd, self.wfd = rfd, wfd

    def send(self, hdr, payload=b""):
        import json
        import struct
        body = json.dumps(hdr, separators=(",", ":")).encode("ascii")
        if payload:
            body += b"\n" + payload
        data = memoryview(struct.pack(">I", len(body)) + body)
        while data:
            data = data[os.write(self.wfd, data):]

    def _exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            b = os.read(self.rfd, min(n - len(buf), 1 << 20))
            if not b:
                raise EOFError("the host closed the channel")
            buf += b
        return bytes(buf)

    def recv(self):
        import json
        import struct
        (n,) = struct.unpack(">I", self._exact(4))
        if n > MAX_FRAME_IN:
            raise ValueError("frame of %d bytes" % n)
        head, _, payload = self._exact(n).partition(b"\n")
        hdr = json.loads(head)
        if not isinstance(hdr, dict):
            raise ValueError("frame header is not an object")
        return hdr, payload


def _status_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree_state(roots, skip):
    """path -> (inode, mode, size, mtime, ctime) of everything under roots."""
    state = {}
    for root in roots:
        try:
            st = os.lstat(root)
        except OSError:
            continue
        state[root] = (st.st_ino, st.st_mode, 0, 0, 0)
        for top, dirs, files in os.walk(root):
            for name in dirs + files:
                p = os.path.join(top, name)
                if p == skip or p.startswith(skip + "/"):
                    continue
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if os.path.isdir(p) and not os.path.islink(p):
                    # a directory's times change when entries come and go
                    state[p] = (st.st_ino, st.st_mode, 0, 0, 0)
                else:
                    state[p] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            dirs[:] = [d for d in dirs if os.path.join(top, d) != skip]
    return state


def _remove(path):
    """Remove a file or a whole tree the job left, whatever modes it set."""
    import shutil
    import stat

    def fix(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o700)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        try:
            os.chmod(path, 0o700)
        except OSError:
            pass
        shutil.rmtree(path, onerror=fix)
    else:
        try:
            os.unlink(path)
        except PermissionError:
            fix(os.unlink, path, None)


class _Worker:
    def __init__(self, kind, shell, own_pidns, warm_budget_mib):
        import ctypes
        import fcntl
        import signal
        self.kind, self.shell = kind, shell
        self.warm_budget_kib = warm_budget_mib * 1024
        self.libc = ctypes.CDLL(None, use_errno=True)
        # fds only the worker may hold: every child closes them all.
        self.private = set()
        # The channel moves to high fds; 0 and 1 become /dev/null.
        self.ch = _Channel(self._own(fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)),
                           self._own(fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)))
        self.diag = self._own(fcntl.fcntl(2, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR))
        self.null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        os.dup2(self.null, 0)
        os.dup2(self.null, 1)
        # Stops: a job reopening the channel through /proc/<worker>/fd/N,
        # or reading and patching the worker through /proc/<worker>/mem.
        # An undumpable process's /proc files belong to root and need
        # CAP_SYS_PTRACE, which nothing in the sandbox has.
        if self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")
        # Orphans of a job (double-forked, setsid'd) become our children:
        # we reap them and can tell when they are gone.
        self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # Killing every other process, wiping /tmp and System V IPC between
        # jobs is right only inside a sandbox of our own (own pid namespace,
        # where we are pid 1 or 2): on the host backend it would hit every
        # process and file of the user.
        self.sandboxed = own_pidns and os.getpid() <= 2
        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.wake_r, self.wake_w = self._own(wake_r), self._own(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        self.reaped = {}
        self.glb = None
        self.import_error = None
        self.dirty = None
        self.spares = []  # pre-forked children, oldest first
        self.job_work = None
        self.warmups = list(SAGE_WARMUPS) if kind == "sage" else []

    def _own(self, fd):
        self.private.add(fd)
        return fd

    def _close(self, fd):
        self.private.discard(fd)
        os.close(fd)

    # -- start
    def start(self):
        import traceback
        prepare_dirs()
        # The backend started us in its work dir (/tmp/work in a sandbox).
        self.base = os.getcwd()
        self.work_mode = os.stat(self.base).st_mode
        sage_version = None
        if self.kind == "sage":
            try:
                self.glb = sage_globals()
                sage_preparse("x = 1\n")
                from sage.version import version as sage_version
            except BaseException:
                self.glb = None
                self.import_error = traceback.format_exc()
        # The driver's own first-use costs (tokenize's regexes, the
        # compiler) are paid here, not by each job's child.
        run_cell("_sb = 1\n_sb\n", python_globals())
        import builtins
        builtins.__dict__.pop("_", None)  # as in a fresh interpreter
        import gc
        gc.freeze()  # (a full collection waits for the first idle moment)
        self.ch.send({"type": "ready", "pid": os.getpid(), "kind": self.kind,
                      "python": sys.version.split()[0], "sage": sage_version,
                      "import_error": self.import_error is not None,
                      "sandboxed": self.sandboxed})
        # From here the worker itself prints nothing: warm-up chatter goes
        # to /dev/null, fatal errors to the saved stderr.
        os.dup2(self.null, 2)
        self.baseline = self._fs_state()

    def _freeze(self):
        # Objects that exist now are never touched by a child's garbage
        # collector, so their pages stay shared instead of being copied.
        import gc
        gc.collect()
        gc.freeze()

    def _collapse(self):
        """Back the worker's anonymous memory with transparent huge pages
        where the kernel can (MADV_COLLAPSE, Linux 6.1): fork then copies
        one entry per 2 MiB instead of 512, and a job's exit unmaps as much
        faster. Best effort; the resident size hardly changes."""
        import ctypes
        madvise = self.libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        huge = 1 << 21
        try:
            with open("/proc/self/maps") as f:
                maps = f.read().splitlines()
        except OSError:
            return
        for line in maps:
            parts = line.split()
            if not parts[1].startswith("rw") or (len(parts) > 5 and parts[5] != "[heap]"):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            lo, hi = (lo + huge - 1) & ~(huge - 1), hi & ~(huge - 1)
            if hi > lo:
                madvise(lo, hi - lo, MADV_HUGEPAGE)
                madvise(lo, hi - lo, MADV_COLLAPSE)

    def _fs_state(self):
        if not self.sandboxed:
            return {}
        return _tree_state(("/tmp", "/dev/shm"), self.base)

    def _warm_one(self):
        src = self.warmups.pop(0)
        self._drop_spares()  # forked before this warm-up: they would miss it
        if self.glb is None or _status_kib("VmRSS") > self.warm_budget_kib * 3 // 4:
            self.warmups = []
            return
        try:
            exec(compile(sage_preparse(src), "<warm-up>", "exec"), dict(self.glb))
        except BaseException:
            pass
        for f in (sys.stdout, sys.stderr):
            f.flush()
        self._freeze()
        if not self.warmups:
            self._collapse()
        self.baseline = self._fs_state()

    # -- main loop
    def serve(self):
        import select
        while self.dirty is None:
            if self.warmups:
                r, _, _ = select.select([self.ch.rfd], [], [], IDLE_BEFORE_WARMUP)
                if not r:
                    self._warm_one()
                    continue
            elif not self.spares:
                # One spare, forked after the job before it is gone (so no
                # job ever runs beside a waiting spare) and off the next
                # job's critical path. (A second spare measured no faster
                # for calls back to back: they are CPU-bound by fork,
                # teardown and copy-on-write, not by waiting.)
                self.spares.append(self._fork_spare())
                continue
            try:
                hdr, payload = self.ch.recv()
            except EOFError:
                return 0
            t = hdr.get("type")
            if t == "run":
                self._job(hdr, payload)
                self._reset()
            elif t != "cancel":  # a cancel for a job that already ended
                raise ValueError("unexpected frame %r" % (t,))
        os.write(self.diag, ("sagebox worker: retiring: %s\n" % self.dirty).encode())
        return 0

    # -- the spare: the next job's child, forked and set up ahead of time
    def _fork_spare(self, job_waiting=False):
        """Fork the child the next job will run in, off the job's critical
        path: it sets itself up and waits for its job on a private pipe.
        job_waiting: a job is already here (no time to pre-touch)."""
        fds = {}
        for name in ("job", "out", "err"):
            r, w = os.pipe2(os.O_CLOEXEC)
            fds[name] = (self._own(r), self._own(w))
        work = self.base
        if not self.sandboxed:
            import tempfile
            work = tempfile.mkdtemp(prefix="job-", dir=self.base)
        for f in (sys.stdout, sys.stderr):
            f.flush()
        pid = os.fork()
        if pid == 0:
            keep = (fds["job"][0], fds["out"][1], fds["err"][1])
            self._child(work, keep, [fd for fd in self.private if fd not in keep], job_waiting)
        for name in ("job", "out", "err"):
            self._close(fds[name][1] if name != "job" else fds[name][0])
        return {"pid": pid, "job_w": fds["job"][1], "out_r": fds["out"][0],
                "err_r": fds["err"][0], "work": work}

    def _spare_fds(self, sp):
        return [sp[k] for k in ("job_w", "out_r", "err_r") if sp[k] >= 0]

    def _drop_spare(self, sp):
        import signal
        self.spares.remove(sp)
        for fd in self._spare_fds(sp):
            self._close(fd)
        pid = sp["pid"]
        if pid > 0 and pid not in self.reaped:  # never kill(-1) or kill(0)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.reaped.pop(pid, None)
        if not self.sandboxed:
            _remove(sp["work"])

    def _drop_spares(self):
        for sp in list(self.spares):
            self._drop_spare(sp)

    def _take_spare(self):
        """The oldest spare that is alive, not exiting and not stopped (a
        job may have signalled it where Landlock cannot scope signals), or
        a new one."""
        import signal
        self._reap()
        while self.spares:
            sp = self.spares[0]
            if sp["pid"] in self.reaped or _exiting_status(sp["pid"], tries=1) is not None:
                self._drop_spare(sp)
                continue
            self.spares.pop(0)
            try:
                os.kill(sp["pid"], signal.SIGCONT)
            except ProcessLookupError:
                pass
            return sp
        return self._fork_spare(job_waiting=True)

    # -- one job
    def _job(self, hdr, code):
        import select
        import time
        jid = hdr["id"]
        lang = hdr["lang"]
        if not isinstance(jid, int) or lang not in ("sage", "python", "shell"):
            raise ValueError("bad run frame")
        timeout = max(int(hdr["timeout_ms"]), 1) / 1000.0
        max_output = int(hdr["max_output"])
        self.reaped.clear()
        trace = {} if hdr.get("trace") else None
        t0 = time.monotonic()
        sp = self._take_spare()
        pid = sp["pid"]
        self.job_work = sp["work"]
        start = time.monotonic()
        deadline = start + timeout
        # The code goes to the child on its private pipe (it is waiting).
        try:
            _Channel(-1, sp["job_w"]).send({"lang": lang, "limits": hdr.get("limits") or {}}, code)
        except BrokenPipeError:
            pass  # the spare died: its wait status says how
        self._close(sp["job_w"])
        self.ch.send({"type": "started", "id": jid})
        if trace is not None:
            trace["handed"] = round((time.monotonic() - t0) * 1000, 2)
        # The next job's child is forked after this one ended (serve), so
        # that it does not compete with this job for the sandbox's CPU.
        keep = tuple(sp["pid"] for sp in self.spares)  # (none: see serve)
        streams = {sp["out_r"]: "stdout", sp["err_r"]: "stderr"}
        totals = dict.fromkeys(streams, 0)
        status = None
        ended_at = killed_at = None
        timed_out = cancelled = flooded = False
        poller = select.poll()
        for fd in list(streams) + [self.ch.rfd, self.wake_r]:
            poller.register(fd, select.POLLIN)

        def kill():
            nonlocal killed_at
            if killed_at is None:
                killed_at = time.monotonic()
            self._sweep(keep)

        while True:
            now = time.monotonic()
            if status is None and pid in self.reaped:
                status = self.reaped.pop(pid)
            if status is None and not streams:
                # Its output is closed: if it is exiting, the kernel
                # already knows the status; no need to wait until its copy
                # of the worker's address space is torn down.
                status = _exiting_status(pid)
            if status is not None and ended_at is None:
                ended_at = now
                if trace is not None:
                    trace["ended"] = round((now - t0) * 1000, 2)
            if status is not None and not streams:
                break
            if killed_at is None and now >= deadline:
                timed_out = True
                kill()
                continue
            if ended_at is not None and streams and killed_at is None and now >= ended_at + EXIT_GRACE:
                kill()
                continue
            if killed_at is not None and now >= killed_at + REAP_GRACE:
                self.dirty = "processes of a job could not be killed"
                break
            if killed_at is not None:
                wake = killed_at + REAP_GRACE
            elif ended_at is not None:
                wake = ended_at + EXIT_GRACE
            else:
                wake = deadline
            for fd, ev in poller.poll(max(0, int((wake - now) * 1000)) + 1):
                if fd in streams:
                    data = os.read(fd, CHUNK)
                    if not data:
                        poller.unregister(fd)
                        del streams[fd]
                        self._close(fd)
                        continue
                    totals[fd] += len(data)
                    self.ch.send({"type": "out", "id": jid, "stream": streams[fd]}, data)
                    if totals[fd] > max_output and not flooded:
                        flooded = True
                        kill()
                elif fd == self.ch.rfd:
                    h, _ = self.ch.recv()
                    if h.get("type") != "cancel":
                        raise ValueError("unexpected frame %r during a job" % (h.get("type"),))
                    if h.get("id") == jid and not cancelled:
                        cancelled = True
                        kill()
                elif fd == self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    self._reap()
        for fd in streams:
            self._close(fd)
        # Whatever the job started and left behind dies now, before the
        # result goes out: daemons, setsid'd grandchildren, stopped
        # processes. (The job's own process may still be tearing down its
        # copy of the worker's memory; it runs no code any more.)
        if trace is not None:
            trace["streams_closed"] = round((time.monotonic() - t0) * 1000, 2)
        self._sweep(keep, wait_for=lambda p: p != pid or status is None)
        if trace is not None:
            trace["swept"] = round((time.monotonic() - t0) * 1000, 2)
        if status is None:
            status = self.reaped.pop(pid, None)
        exit_code, sig = -1, 0
        if status is None:
            self.dirty = self.dirty or "lost the exit status of a job"
        elif os.WIFEXITED(status):
            exit_code = os.WEXITSTATUS(status)
        elif os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
        done = {"type": "done", "id": jid, "exit_code": exit_code, "signal": sig,
                "timed_out": timed_out, "cancelled": cancelled, "flooded": flooded}
        if trace is not None:
            done["trace"] = trace
        self.ch.send(done)

    def _reap(self):
        while True:
            try:
                p, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if p == 0:
                return
            self.reaped[p] = st

    def _sweep(self, keep=(), wait_for=lambda p: True):
        """SIGKILL every process except the sandbox's init, the worker and
        `keep` (the spare), until none is left, then wait until those that
        wait_for(pid) selects are reaped. A job's processes cannot hide from
        this by setsid or double fork: it goes by the pid namespace (or, on
        the host backend, by our subreaper subtree), not by process group.
        Once SIGKILLed, a process can neither fork nor run code again."""
        import signal
        import time
        exempt = {1, os.getpid(), *keep}
        killed = set()
        deadline = time.monotonic() + REAP_GRACE
        while True:
            new = [p for p in self._pids() if p not in exempt and p not in killed]
            if not new:
                break
            for p in new:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                killed.add(p)
            if time.monotonic() > deadline:
                self.dirty = self.dirty or "processes of a job could not be killed"
                return
        waiting = {p for p in killed if wait_for(p)}
        while waiting:
            self._reap()
            waiting = {p for p in waiting if p not in self.reaped and os.path.exists("/proc/%d" % p)}
            if not waiting:
                break
            if time.monotonic() > deadline:
                self.dirty = self.dirty or "processes of a job could not be reaped"
                return
            time.sleep(0.0005)

    def _pids(self):
        if self.sandboxed:
            return [int(n) for n in os.listdir("/proc") if n.isdigit()]
        return self._descendants()

    def _descendants(self):
        parent = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open("/proc/%s/stat" % name) as f:
                        parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        me, found, changed = os.getpid(), set(), True
        while changed:
            changed = False
            for p, pp in parent.items():
                if p not in found and (pp == me or pp in found):
                    found.add(p)
                    changed = True
        return found

    # -- between jobs: the next job must find what a fresh sandbox has
    def _reset(self):
        import time
        t0 = time.monotonic()
        self._reap()
        if not self.sandboxed:
            # host backend (no isolation): only the job's own directory
            _remove(self.job_work)
            return
        WORK = self.base
        try:
            os.chdir("/")
            # Modes first: a job may have made a directory unreadable.
            for p, want in [(WORK, (None, self.work_mode))] + list(self.baseline.items()):
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if (want[0] is None or st.st_ino == want[0]) and st.st_mode != want[1]:
                    try:
                        os.chmod(p, want[1] & 0o7777, follow_symlinks=False)
                    except (OSError, NotImplementedError):
                        pass
            if os.path.islink(WORK) or not os.path.isdir(WORK):
                _remove(WORK)
                os.mkdir(WORK, self.work_mode & 0o7777)
            for name in os.listdir(WORK):
                _remove(os.path.join(WORK, name))
            for p in sorted(set(self._fs_state()) - set(self.baseline), reverse=True):
                _remove(p)
            now = self._fs_state()
            if now != self.baseline:
                changed = sorted(p for p in set(now) | set(self.baseline)
                                 if now.get(p) != self.baseline.get(p))
                self.dirty = "the job changed files the worker keeps: " + ", ".join(changed[:5])
            if os.listdir(WORK):
                self.dirty = self.dirty or "cannot empty " + WORK
            self._clear_ipc()
            os.chdir(WORK)
        except OSError as e:
            self.dirty = "cannot reset the sandbox's files: %s" % e
        if time.monotonic() - t0 > 5:
            self.dirty = self.dirty or "resetting the files took too long"

    def _clear_ipc(self):
        # System V shared memory, semaphores and message queues outlive
        # their creator: remove whatever a job made.
        ops = (("shm", self.libc.shmctl), ("sem", self.libc.semctl), ("msg", self.libc.msgctl))
        for name, ctl in ops:
            try:
                with open("/proc/sysvipc/" + name) as f:
                    rows = f.read().splitlines()[1:]
            except OSError:
                continue
            for row in rows:
                ipc_id = int(row.split()[1])
                if name == "sem":
                    ctl(ipc_id, 0, 0)  # IPC_RMID
                else:
                    ctl(ipc_id, 0, None)

    # -- the child: becomes the job
    def _child(self, work, keep, close, job_waiting=False):
        import signal
        job_r, out_w, err_w = keep
        status = 1
        try:
            # Stops: user code writing frames into the protocol channel,
            # reading the next job's code or another job's output: none of
            # the worker's own fds remain.
            for fd in close:
                os.close(fd)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            # Its own session and process group, no controlling terminal
            # (the fresh sandbox's command is setsid'd too).
            os.setsid()
            # The OOM killer takes a job, not the worker it came from.
            try:
                with open("/proc/self/oom_score_adj", "w") as f:
                    f.write("1000")
            except OSError:
                pass
            self._child_scope()
            if not job_waiting:
                self._pretouch()
            self._reseed()
            try:
                hdr, code = _Channel(job_r, -1).recv()
            except (EOFError, ValueError):
                os._exit(0)  # not needed after all
            os.close(job_r)
            # Until here it was undumpable like the worker: while it waits,
            # the job running before it cannot ptrace it or patch its
            # memory through /proc. Now it is an ordinary process.
            self.libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
            lang = hdr["lang"]
            sys.argv = ["-c", "once", lang]
            os.chdir(work)
            self._child_limits(hdr.get("limits") or {})
            os.dup2(self.null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (self.null, out_w, err_w):
                os.close(fd)
            status = self._child_run(lang, code.decode("utf-8", "replace"))
        except BaseException:
            try:
                _print_user_traceback()
            except BaseException:
                pass
        _child_exit(status)

    def _pretouch(self):
        """Run a typical small job here, before the real one arrives and
        while fds 1 and 2 are still /dev/null: the copy-on-write faults and
        cold caches that every child of the worker would otherwise pay at
        the start of its job are paid while it waits."""
        if self.glb is None:
            return
        try:
            exec(compile(sage_preparse(PRETOUCH), "<pre-touch>", "exec"), dict(self.glb))
        except BaseException:
            pass
        for f in (sys.stdout, sys.stderr):
            f.flush()

    def _reseed(self):
        # Each child would otherwise repeat the worker's random numbers.
        if "sage.misc.randstate" in sys.modules:
            sys.modules["sage.misc.randstate"].set_random_seed()
        if "numpy.random" in sys.modules:
            sys.modules["numpy.random"].seed()

    def _child_limits(self, limits):
        import resource

        def lower(res, value):
            soft, hard = resource.getrlimit(res)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(res, (value, value))
        # The job may add `memory` bytes of private data to what it
        # inherited from the worker; the sandbox's cgroup (or the worker's
        # own RLIMIT_DATA) bounds the sum.
        if limits.get("memory_bytes"):
            lower(resource.RLIMIT_DATA, _status_kib("VmData") * 1024 + int(limits["memory_bytes"]))
        if limits.get("nofile"):
            lower(resource.RLIMIT_NOFILE, int(limits["nofile"]))
        if limits.get("fsize_bytes"):
            lower(resource.RLIMIT_FSIZE, int(limits["fsize_bytes"]))
        lower(resource.RLIMIT_CORE, 0)

    def _child_scope(self):
        """Stops: a job signalling (killing, stopping) its worker. A nested
        Landlock domain scoped for signals and abstract unix sockets (ABI
        6) lets the job reach only its own processes. Best effort: older
        kernels and Landlock-less backends rely on the host restarting a
        worker that died."""
        import ctypes
        sc = self.libc.syscall
        if _landlock_abi(self.libc) < 6:
            return
        attr = (ctypes.c_uint64 * 3)(0, 0, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)
        fd = sc(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint(0))
        if fd < 0:
            return
        sc(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint(0))
        os.close(fd)

    def _child_run(self, lang, code):
        def sage_glb():
            if self.import_error is not None:
                sys.stderr.write(self.import_error)
                return None
            if self.glb is not None:
                return dict(self.glb)  # a copy of the pristine namespace
            glb = sage_globals()
            self._reseed()
            return glb
        return run_code(lang, code, self.shell, sage_glb)


def _landlock_abi(libc):
    import ctypes
    sc = libc.syscall
    sc.restype = ctypes.c_long
    return sc(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint(1))


def _child_exit(status):
    """Leave as a fresh `python3 driver once` would: wait for non-daemon
    threads, run atexit handlers, flush. Then close the output before
    _exit, so the worker sees the end of the job at once (it reads the
    status from /proc while the kernel tears down the address space)."""
    import atexit
    import threading
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass
    status = status & 0xff if isinstance(status, int) else 1
    for fd in (1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(status)


def _exiting_status(pid, tries=20):
    """The wait status of a child that is exiting but not yet reaped, from
    /proc/PID/stat (PF_EXITING in flags, field 9; exit_code, field 52: set
    by the kernel before the address space goes, so the job's code cannot
    forge it). None when it is not exiting (yet)."""
    import time
    for _ in range(tries):
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[6]) & 0x4 and len(fields) >= 50:
                return int(fields[49])
        except (OSError, ValueError, IndexError):
            return None
        time.sleep(0.0001)
    return None


def run_worker(kind, shell, own_pidns, warm_budget_mib):
    if kind not in ("sage", "python"):
        sys.stderr.write("sagebox worker: unknown kind %r\n" % kind)
        return 125
    # Everything a job's child needs is imported here, once: an import in
    # the child would be paid again by every job.
    import atexit, ctypes, json, linecache, resource, select, signal, struct  # noqa: F401,E401
    import tempfile, threading, time, traceback  # noqa: F401,E401
    w = _Worker(kind, shell, own_pidns, warm_budget_mib)
    try:
        w.start()
        return w.serve()
    except BaseException:
        import traceback
        os.write(w.diag, ("sagebox worker: " + traceback.format_exc()).encode("utf-8", "replace"))
        return 3


def main(argv):
    if len(argv) >= 2 and argv[0] == "once":
        shell = argv[2] if len(argv) > 2 else "/bin/sh"
        sys.exit(run_once(argv[1], shell))
    if len(argv) == 5 and argv[0] == "worker":
        sys.exit(run_worker(argv[1], argv[2], argv[3] == "1", int(argv[4])))
    sys.stderr.write("sagebox driver: usage: once LANG [SHELL] | worker KIND SHELL OWN_PIDNS WARM_MIB\n")
    sys.exit(125)


main(sys.argv[1:])
