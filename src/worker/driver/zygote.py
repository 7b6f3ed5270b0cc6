"""The warm worker. It runs as the sandbox's command, imports once, then
forks one child per job and never runs user code itself. It speaks the
framed protocol (channel.py) on its stdin/stdout; docs/WARM.md has it:

  host -> worker:  run {id, lang, timeout_ms, max_output, limits,
                        code_bytes, exit_grace_ms, max_figure_bytes,
                        figures} + code_bytes raw bytes
                        (protocol v1: no code_bytes, the code is the frame's
                        payload; still accepted)
                   cancel {id}
  worker -> host:  ready {pid, kind, python, sage, import_error, sandboxed}
                   started {id}        the child has its code: the job began
                   out {id, stream} + bytes   stream: stdout, stderr, figures
                   done {id, exit_code, signal, timed_out, cancelled, flooded}

A job's bytes never enter the worker's memory: its code is spliced from the
channel into the child's pipe, its output and its figures (figures.py) from
the child's pipes into the channel, and the files it leaves are listed and
removed by the janitor, a process of its own. Every later child is a fork
of the worker, and would inherit whatever the worker had held (issue 13.1).

The host trusts none of it beyond one job: it keeps its own deadline and
caps, and kills the whole sandbox when the worker misbehaves.

A fresh sandbox (fresh isolation) runs the same worker for one job
(one_job): no janitor, spare or warm-up, the job may arrive before `ready`,
and the worker exits after it; the sandbox is discarded."""
import os
import sys

from . import cell, confine, figures, magics, memory
from .channel import Channel, Malformed, discard, pending, _splice
from .janitor import Janitor
from .procs import Procs, REAP_GRACE, exiting_status, is_exiting
from .warmup import SAGE_WARMUPS
from . import warmup

FD_FLOOR = 200          # protocol fds are moved up here, away from 0-2
CHUNK = 1 << 16         # the most bytes of output in one `out` frame
EXIT_GRACE_MS = 300     # pipes held open after the job's exit (as fresh);
                        # the host's exit_grace_ms overrides it
IDLE_BEFORE_WARMUP = 0.05
JOB_FRAME_MAX = 1 << 16  # the frame a spare gets on its job pipe
# A child's trace stamps (see _job's trace): ready, got_job, code_start,
# CLOCK_MONOTONIC microseconds, little-endian int64 each.
CHILD_STAMPS = ("ready", "got_job", "code_start")
CHILD_STAMP_BYTES = 8 * len(CHILD_STAMPS)


def _us():
    """CLOCK_MONOTONIC in microseconds: the host's clock too (sb_now_us),
    so the host can place the worker's stamps on its own timeline."""
    import time
    return time.monotonic_ns() // 1000


# Run by each pre-forked child before its job (see _pretouch), one cell at
# a time: the first goes the whole way a job's cell goes (preparse,
# compile, display), the Sage ones pay Sage's copy-on-write faults.
PRETOUCH = {
    "sage": ("1\n", "R.<x> = QQ[]\nprint(factor(x^4 - 1))\n", "print(2^10, 1/3 + 1/6, sqrt(2).n())\n"),
    "python": ("1\n",),
}
# A run frame that came within this long after the worker was ready for it
# counts as a call back to back (_job forks the next spare meanwhile); a
# model thinks for seconds between calls.
BACK_TO_BACK_US = 20000
# The byte that lets a spare go on from its set-up to its pre-touch: sent
# once the sandbox has been reset after the previous job (_go).
GO = b"G"


class Worker:
    def __init__(self, kind, shell, own_pidns, warm_budget_mib, one_job=False):
        import fcntl
        import signal
        self.kind, self.shell, self.one_job = kind, shell, one_job
        self.warm_budget_kib = warm_budget_mib * 1024
        self.libc = confine.libc()
        # fds only the worker may hold: every child closes them all.
        self.private = set()
        # The channel moves to high fds; 0 and 1 become /dev/null.
        self.ch = Channel(self._own(fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)),
                          self._own(fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)))
        self.diag = self._own(fcntl.fcntl(2, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR))
        self.job_cgroup = self._job_cgroup_fd(fcntl)
        self.null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        os.dup2(self.null, 0)
        os.dup2(self.null, 1)
        # Stops: a job reopening the channel through /proc/<worker>/fd/N,
        # or reading and patching the worker through /proc/<worker>/mem.
        confine.set_dumpable(False)
        confine.become_subreaper()
        # Killing every other process, wiping /tmp and System V IPC between
        # jobs is right only inside a sandbox of our own (own pid namespace,
        # where we are pid 1 or 2): on the host backend it would hit every
        # process and file of the user.
        self.sandboxed = own_pidns and os.getpid() <= 2
        self.procs = Procs(self.sandboxed)
        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.wake_r, self.wake_w = self._own(wake_r), self._own(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        self.glb = None
        self.import_error = None
        self.dirty = None
        self.janitor = None
        self.spares = []  # pre-forked children, oldest first
        self.job_work = None
        self.warmups = list(SAGE_WARMUPS) if kind == "sage" and not one_job else []
        # Debug timing (the host's SAGEBOX_WARM_TRACE): once a job asked
        # for a trace, spares get a pipe for their own stamps, and the
        # between-jobs work is timed (reported with the next job).
        self.trace = False
        self.import_w = -1         # a fresh child's end of its import pipe (_fork_spare)
        self.between = {}
        self.back_to_back = False
        self.jobs_done = 0
        self._stamp_buf = bytearray(CHILD_STAMP_BYTES)

    def _job_cgroup_fd(self, fcntl):
        """The cgroup.procs of the jobs' cgroup (the native backend's
        SAGEBOX_JOB_CGROUP_FD): each job's process moves itself in before
        its code runs, and is then held to `cpus` there while the worker's
        own work is not (see src/sandbox/native/cgroup.c JOB_CGROUP).
        -1: none, the sandbox as a whole is held to `cpus`."""
        name = os.environ.pop("SAGEBOX_JOB_CGROUP_FD", None)
        if name is None:
            return -1
        fd = int(name)
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)
        os.close(fd)
        return self._own(high)

    def _join_job_cgroup(self):
        """In the child, after its pre-touch and before the job's code: into
        the jobs' cgroup. None, or why it could not (then the job must not
        run: never with the worker's larger share). A move can wait for an
        RCU grace period (the cgroup's threadgroup lock), ~6 ms on an idle
        machine: a spare that pre-touched has paid it before its job came."""
        if self.job_cgroup < 0:
            return None
        try:
            os.write(self.job_cgroup, b"0")  # "0": the writing process
            os.close(self.job_cgroup)
        except OSError as e:
            return ("sagebox: the job was not run: its process could not join the cgroup that "
                    "holds each job to the `cpus` limit (%s). Report this with the output of "
                    "`sagebox status`.\n" % (e.strerror,))
        self.job_cgroup = -1
        return None

    def _own(self, fd):
        self.private.add(fd)
        return fd

    def _close(self, fd):
        self.private.discard(fd)
        os.close(fd)

    # -- start
    def start(self):
        import traceback
        cell.prepare_dirs()
        # The backend started us in its work dir (/tmp/work in a sandbox).
        self.base = os.getcwd()
        # Forked now, small and before any job: it inherits no job's bytes
        # and none of Sage. (One job: the sandbox is discarded after it.)
        if not self.one_job:
            self.janitor = Janitor(self.sandboxed, self.base, self.libc, self.diag,
                                   [fd for fd in self.private if fd != self.diag])
            for fd in self.janitor.fds:
                self._own(fd)
        sage_version = None
        # One job: Sage is imported by the job's child, not here, so that
        # the sandbox holds one Sage, as a fresh sandbox always did (a
        # child of a Sage worker would copy the pages it touches, and the
        # job would have less of the sandbox's memory).
        if self.kind == "sage" and not self.one_job:
            try:
                self.glb = cell.sage_globals()
                cell.sage_preparse("x = 1\n")
                from sage.version import version as sage_version
            except BaseException:
                self.glb = None
                self.import_error = traceback.format_exc()
        # Graphics become figures in every job (inherited by each child).
        figures.install()
        # IPython's transformer for %magics and !cmd, loaded once here, not
        # by every job that uses them (one job: only by a job that does)
        if not self.one_job:
            magics.load()
        # The driver's own first-use costs (tokenize's regexes, the
        # compiler) are paid here, not by each job's child.
        cell.run_cell("_sb = 1\n_sb\n", cell.python_globals())
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
        self._baseline()

    def _baseline(self):
        if self.janitor:
            self.dirty = self.dirty or self.janitor.ask({"op": "baseline"})

    def _warm_one(self):
        self._drop_spares()  # forked before this warm-up: they would miss it
        warmup.step(self.warmups, self.glb, self.warm_budget_kib, self.libc)
        self._baseline()

    # -- main loop
    def serve(self):
        import select
        if self.one_job:
            return self._serve_one()
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
                t = _us()
                sp = self._fork_spare()
                self.spares.append(sp)
                self.between["spare_fork_us"] = _us() - t
                self._go(sp)  # (the reset is done: serve runs it after each job)
                continue
            self.between["idle_from"] = idle_from = _us()
            try:
                hdr, payload = self.ch.recv()
            except EOFError:
                self._drop_spares()  # (the host backend: their directories)
                return 0
            t = hdr.get("type")
            # Calls back to back: the next one was already waiting (the
            # worker was hardly idle) after an earlier job. Then the next
            # spare is forked while this job runs (see _job). Not for the
            # first job: a one-shot `sagebox run` has no next one.
            self.back_to_back = self.jobs_done > 0 and _us() - idle_from < BACK_TO_BACK_US
            if t == "run":
                self._job(hdr, payload)
                self.jobs_done += 1
                t = _us()
                self._reset()
                self.between = {"reset_us": _us() - t}
                if self.spares and self.dirty is None:
                    # the spare forked during the job (back to back): it
                    # may set itself up for the next job now
                    self._go(self.spares[0])
            elif t != "cancel":  # a cancel for a job that already ended
                raise Malformed("unexpected frame %r" % (t,))
        os.write(self.diag, ("sagebox worker: retiring: %s\n" % self.dirty).encode())
        return 0

    def _serve_one(self):
        """One job, then exit (the sandbox goes with it). Its child is
        forked when the job is here: nothing to pre-touch for."""
        try:
            hdr, payload = self.ch.recv()
        except EOFError:
            return 0
        if hdr.get("type") != "run":
            raise Malformed("unexpected frame %r" % (hdr.get("type"),))
        self._job(hdr, payload)
        return 0

    def _reset(self):
        """Between jobs: the next job must find what a fresh sandbox has."""
        self.procs.reap()
        if self.janitor:
            self.dirty = self.dirty or self.janitor.ask({"op": "reset", "job_work": self.job_work})

    # -- the spare: the next job's child, forked and set up ahead of time
    def _fork_spare(self, pretouch_after=0.0):
        """Fork the child the next job will run in, off the job's critical
        path: it sets itself up and waits for its job on a private pipe.
        pretouch_after: how long after its go it waits for a job before it
        pre-touches (None: a job is already here, no time to pre-touch)."""
        fds = {}
        # "import": a fresh sandbox's child imports Sage itself and says on
        # this pipe when the import is over (see _import_died)
        importing = self.one_job and self.kind == "sage"
        names = ("job", "out", "err", "fig") + (("trace",) if self.trace else ()) + (("import",) if importing else ())
        work = self.base
        try:
            for name in names:
                r, w = os.pipe2(os.O_CLOEXEC)
                fds[name] = (self._own(r), self._own(w))
            if not self.sandboxed and not self.one_job:
                import tempfile
                work = tempfile.mkdtemp(prefix="job-", dir=self.base)
            for f in (sys.stdout, sys.stderr):
                f.flush()
            pid = os.fork()
        except OSError:
            # (out of pids, memory or fds: the caller decides whether that
            # is fatal)
            for pair in fds.values():
                for fd in pair:
                    self._close(fd)
            if work != self.base:
                os.rmdir(work)
            raise
        if pid == 0:
            keep = (fds["job"][0], fds["out"][1], fds["err"][1], fds["fig"][1])
            trace_w = fds["trace"][1] if self.trace else -1
            self.import_w = fds["import"][1] if importing else -1
            self._child(work, keep, [fd for fd in self.private
                                     if fd not in keep and fd not in (trace_w, self.job_cgroup, self.import_w)],
                        pretouch_after, trace_w)
        for name in names:
            self._close(fds[name][1] if name != "job" else fds[name][0])
        return {"pid": pid, "job_w": fds["job"][1], "out_r": fds["out"][0],
                "err_r": fds["err"][0], "fig_r": fds["fig"][0], "work": work, "go": False,
                "trace_r": fds["trace"][0] if self.trace else -1,
                "import_r": fds["import"][0] if importing else -1}

    def _go(self, sp):
        """Let a spare go on to its pre-touch. Only once the sandbox has
        been reset after the previous job: the pre-touch runs Sage, which
        may read files under /tmp, and must not read what a job left
        there. (A spare that died meanwhile is found by _take_spare.)"""
        if not sp["go"]:
            sp["go"] = True
            try:
                os.write(sp["job_w"], GO)
            except OSError:
                pass

    def _spare_fds(self, sp):
        return [sp[k] for k in ("job_w", "out_r", "err_r", "fig_r", "trace_r", "import_r") if sp[k] >= 0]

    def _drop_spare(self, sp):
        import signal
        self.spares.remove(sp)
        for fd in self._spare_fds(sp):
            self._close(fd)
        pid = sp["pid"]
        if pid > 0 and pid not in self.procs.reaped:  # never kill(-1) or kill(0)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.procs.reaped.pop(pid, None)
        if not self.sandboxed and self.janitor:
            self.dirty = self.dirty or self.janitor.ask({"op": "remove", "path": sp["work"]})

    def _drop_spares(self):
        for sp in list(self.spares):
            self._drop_spare(sp)

    def _take_spare(self):
        """The oldest spare that is alive, not exiting and not stopped (a
        job may have signalled it where Landlock cannot scope signals), or
        a new one."""
        import signal
        self.procs.reap()
        while self.spares:
            sp = self.spares[0]
            if sp["pid"] in self.procs.reaped or is_exiting(sp["pid"]):
                self._drop_spare(sp)
                continue
            self.spares.pop(0)
            try:
                os.kill(sp["pid"], signal.SIGCONT)
            except ProcessLookupError:
                pass
            self._go(sp)  # (called after the previous job's reset)
            return sp
        sp = self._fork_spare(pretouch_after=None)
        self._go(sp)
        return sp

    def _hand_over(self, sp, hdr, payload):
        """Give the waiting child its job: a small frame, then the code,
        moved from the channel straight into the child's pipe (protocol
        v2) so that the worker never holds it. A v1 run frame carried the
        code inside (payload), already in our memory: written as is."""
        k = hdr.get("code_bytes")
        raw = isinstance(k, int) and not isinstance(k, bool) and k >= 0
        if not raw:
            k = len(payload)
        left = k if raw else 0
        try:
            Channel(-1, sp["job_w"]).send({"lang": hdr["lang"], "limits": hdr.get("limits") or {},
                                          "figures": hdr.get("figures"), "code_bytes": k})
            if not raw:
                Channel(-1, sp["job_w"])._write(payload)
            while left > 0:
                n = _splice(self.ch.rfd, sp["job_w"], min(left, 1 << 20))
                if n == 0:
                    raise EOFError("the host closed the channel")
                left -= n
        except BrokenPipeError:
            # the spare died (its wait status says how); the rest of the
            # code must still leave the channel, unread
            if left:
                discard(self.ch.rfd, left)
        self._close(sp["job_w"])

    # -- one job
    def _job(self, hdr, payload):
        import select
        import time
        jid = hdr.get("id")
        lang = hdr.get("lang")
        if not isinstance(jid, int) or lang not in ("sage", "python", "shell"):
            raise Malformed("bad run frame")
        timeout = max(int(hdr["timeout_ms"]), 1) / 1000.0
        max_output = int(hdr["max_output"])
        max_figures = hdr.get("max_figure_bytes")
        if not isinstance(max_figures, int) or isinstance(max_figures, bool):
            max_figures = max_output
        grace = hdr.get("exit_grace_ms")
        exit_grace = (grace if isinstance(grace, int) and 0 <= grace <= 60000 else EXIT_GRACE_MS) / 1000.0
        # Statuses of the last job's processes are forgotten; a spare's is
        # kept, so that _take_spare sees a spare that died (or was killed).
        spare_pids = {sp["pid"] for sp in self.spares}
        self.procs.reaped = {p: st for p, st in self.procs.reaped.items() if p in spare_pids}
        # Debug timing: CLOCK_MONOTONIC microseconds (see _us), reported in
        # the done frame; the host prints them (SAGEBOX_WARM_TRACE).
        trace = None
        if hdr.get("trace") is True:
            self.trace = True
            trace = {"recv": _us(), **self.between}
        sp = self._take_spare()
        if trace is not None:
            trace["spare_taken"] = _us()
        pid = sp["pid"]
        self.job_work = sp["work"]
        start = time.monotonic()
        deadline = start + timeout
        self._hand_over(sp, hdr, payload)
        del payload
        if trace is not None:
            trace["handed"] = _us()
        self.ch.send({"type": "started", "id": jid})
        keep = [sp["pid"] for sp in self.spares] + ([self.janitor.pid] if self.janitor else [])
        # The next job's child: when calls come back to back, forked now,
        # while this job runs (the fork's cost overlaps the job, on the
        # other CPU when there is one); it waits for its go until the
        # sandbox has been reset after this job, so nothing this job leaves
        # reaches it (it reads no file before its go). When calls are
        # spaced, it is forked after this job (serve), off every call's
        # path and not beside a job.
        if self.back_to_back and not self.spares and not self.warmups:
            t = _us()
            try:
                # When the next call comes back to back too, it finds this
                # child waiting, not in the middle of a pre-touch cell (the
                # job then pays those faults itself, as the cell would have).
                self.spares.append(self._fork_spare(pretouch_after=BACK_TO_BACK_US / 1e6))
                keep.append(self.spares[-1]["pid"])
            except OSError:
                pass  # (this job holds the pids or memory: forked after it)
            if trace is not None:
                trace["spare_fork_in_job_us"] = _us() - t
        streams = {sp["out_r"]: "stdout", sp["err_r"]: "stderr", sp["fig_r"]: "figures"}
        limits = {sp["out_r"]: max_output, sp["err_r"]: max_output, sp["fig_r"]: max_figures}
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
            self.dirty = self.dirty or self.procs.sweep(keep)

        while True:
            now = time.monotonic()
            if status is None and pid in self.procs.reaped:
                status = self.procs.reaped.pop(pid)
            if status is None and not streams:
                # Its output is closed: if it is exiting, the kernel
                # already knows the status; no need to wait until its copy
                # of the worker's address space is torn down.
                status = exiting_status(pid)
            if status is not None and ended_at is None:
                ended_at = now
                if trace is not None:
                    trace["ended"] = _us()
            if status is not None and not streams:
                break
            if killed_at is None and now >= deadline:
                timed_out = True
                kill()
                continue
            if ended_at is not None and streams and killed_at is None and now >= ended_at + exit_grace:
                kill()
                continue
            if killed_at is not None and now >= killed_at + REAP_GRACE:
                self.dirty = "processes of a job could not be killed"
                break
            if killed_at is not None:
                wake = killed_at + REAP_GRACE
            elif ended_at is not None:
                wake = ended_at + exit_grace
            else:
                wake = deadline
            for fd, ev in poller.poll(max(0, int((wake - now) * 1000)) + 1):
                if fd in streams:
                    n = pending(fd)
                    if n == 0:
                        if ev & (select.POLLHUP | select.POLLERR):  # the end of that stream
                            poller.unregister(fd)
                            del streams[fd]
                            self._close(fd)
                        continue
                    n = min(n, CHUNK)
                    if trace is not None and "first_out" not in trace:
                        trace["first_out"] = _us()
                    totals[fd] += n
                    # The job's output goes from its pipe to the host
                    # without passing through the worker's memory.
                    self.ch.send_spliced({"type": "out", "id": jid, "stream": streams[fd]}, fd, n)
                    if totals[fd] > limits[fd] and not flooded:
                        flooded = True
                        kill()
                elif fd == self.ch.rfd:
                    try:
                        h, _ = self.ch.recv()
                    except EOFError:
                        # The host sends nothing more (a fresh sandbox's
                        # host may close it after the job): the job goes on.
                        poller.unregister(fd)
                        continue
                    if h.get("type") != "cancel":
                        raise Malformed("unexpected frame %r during a job" % (h.get("type"),))
                    if h.get("id") == jid and not cancelled:
                        cancelled = True
                        kill()
                elif fd == self.wake_r:
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    self.procs.reap()
        for fd in streams:
            self._close(fd)
        # Whatever the job started and left behind dies now, before the
        # result goes out: daemons, setsid'd grandchildren, stopped
        # processes. (The job's own process may still be tearing down its
        # copy of the worker's memory; it runs no code any more.)
        if trace is not None:
            trace["streams_closed"] = _us()
        self.dirty = self.dirty or self.procs.sweep(keep, wait_for=lambda p: p != pid or status is None)
        if trace is not None:
            trace["swept"] = _us()
            trace.update(self._child_stamps(sp))
        if sp["trace_r"] >= 0:
            self._close(sp["trace_r"])
        if status is None:
            status = self.procs.reaped.pop(pid, None)
        if sp["import_r"] >= 0:
            if status is not None and not (timed_out or cancelled or flooded):
                self._import_died(sp["import_r"], jid, status, hdr.get("limits"))
            self._close(sp["import_r"])
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
            trace["done"] = _us()
            done["trace"] = trace
        self.ch.send(done)

    def _import_died(self, import_r, jid, status, limits):
        """A fresh sandbox's child that ended before its Sage import was
        over (no byte on its import pipe) never ran the job's code, and may
        have had no memory left to say why: under a tight memory limit
        Sage's import can fail in C code that crashes, or leaves Python
        unable to format the error. Say it for it."""
        try:
            os.set_blocking(import_r, False)
            if os.read(import_r, 1):
                return  # the import was over: the job said what happened
        except OSError:
            pass
        import signal
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:  # a real-time signal past SIGRTMIN has no name of its own
                name = signal.strsignal(sig) or "?"
            how = "was killed by signal %d (%s)" % (sig, name)
        else:
            how = "exited with status %d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
        mem = (limits or {}).get("memory_bytes")
        why = ("\nsagebox: the job's process %s while it imported Sage, before the job's code ran" % how)
        if isinstance(mem, int) and mem > 0:
            why += (", under a memory limit of %d MiB: most likely Sage ran out of memory as it started. "
                    "Raise the memory limit (the memory setting).\n" % (mem >> 20))
        else:
            why += ".\n"
        self.ch.send({"type": "out", "id": jid, "stream": "stderr"}, why.encode())

    def _child_stamps(self, sp):
        """The stamps the child wrote before its code ran (it closed the
        pipe then: the job itself never had it). Read into a fixed buffer
        that is wiped, as procs.stat_fields does."""
        import struct
        if sp["trace_r"] < 0:
            return {}
        buf = self._stamp_buf
        try:
            os.set_blocking(sp["trace_r"], False)
            n = os.readv(sp["trace_r"], [buf])
        except OSError:
            n = 0
        try:
            if n != CHILD_STAMP_BYTES:
                return {}
            return {"child_" + k: v for k, v in zip(CHILD_STAMPS, struct.unpack("<3q", buf))}
        finally:
            buf[:] = bytes(CHILD_STAMP_BYTES)

    # -- the child: becomes the job
    def _child(self, work, keep, close, pretouch_after=0.0, trace_w=-1):
        import signal
        job_r, out_w, err_w, fig_w = keep
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
            confine.prefer_oom_kill()
            confine.scope_signals_and_sockets()
            # Fresh seeds now, ahead of the go (getrandom(2) only, no file):
            # in a new fork they cost ~15 ms of copy-on-write faults, paid
            # before the job arrives (for a spare forked during a job back
            # to back, while that job still runs).
            self._reseed()
            if os.read(job_r, len(GO)) != GO:
                os._exit(0)  # dropped before its go
            if pretouch_after is not None:
                self._pretouch(job_r, pretouch_after)
            # After the pre-touch, so that it never spends the job's quota
            # (a job that came during it joins now, as it would have).
            cgroup_error = self._join_job_cgroup()
            # What the job may add to is what it inherits (read here, before
            # the job: nothing allocates much between now and its code).
            data_bytes = memory.status_kib("VmData") * 1024
            stamps = [_us()]
            try:
                jch = Channel(job_r, -1, max_in=JOB_FRAME_MAX)
                hdr, _ = jch.recv()
                code = jch.exact(int(hdr["code_bytes"]))
            except (EOFError, ValueError, KeyError, TypeError):
                os._exit(0)  # not needed after all
            stamps.append(_us())
            os.close(job_r)
            if cgroup_error is not None:
                os.write(err_w, cgroup_error.encode())
                os._exit(125)  # SB_EXIT_SANDBOX: the sandbox failed, not the code
            # Until here it was undumpable like the worker: while it waits,
            # the job running before it cannot ptrace it or patch its
            # memory through /proc. Now it is an ordinary process.
            confine.set_dumpable(True)
            lang = hdr["lang"]
            os.chdir(work)
            limits = dict(hdr.get("limits") or {})
            if self.one_job:
                # The sandbox's own limits are the job's (and Sage is still
                # to be imported here): no RLIMIT_DATA on top.
                limits.pop("memory_bytes", None)
            confine.apply_job_limits(limits, data_bytes)
            os.dup2(self.null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (self.null, out_w, err_w):
                os.close(fd)
            code = code.decode("utf-8", "replace")
            if trace_w >= 0:
                # written and closed before the job's code runs
                import struct
                try:
                    os.write(trace_w, struct.pack("<3q", *stamps, _us()))
                except OSError:
                    pass
                os.close(trace_w)
            # Besides fds 0-2, the job holds only its figure pipe
            # (close-on-exec: no program it runs inherits it).
            figures.begin(fig_w, hdr.get("figures"))
            status = self._child_run(lang, code)
        except BaseException:
            try:
                cell.print_user_traceback()
            except BaseException:
                pass
        _child_exit(status)

    def _pretouch(self, job_r, after):
        """Run typical small cells here, after the go and before the job,
        while fds 1 and 2 are still /dev/null: the copy-on-write faults and
        cold caches that every child of the worker would otherwise pay at
        the start of its job are paid while it waits. One cell at a time,
        and no more once the job is here (it pays the rest itself, no
        later than it would have). Not before `after` seconds have passed
        without a job: a job that comes while a cell runs waits for it."""
        import builtins
        import linecache
        import select
        if self.kind == "sage" and self.glb is None:
            return
        glb = self.glb if self.glb is not None else cell.python_globals()
        for src in PRETOUCH[self.kind]:
            if select.select([job_r], [], [], after)[0]:
                break
            after = 0
            try:
                # Its names go to a dict of its own: the job gets the
                # pristine namespace itself, not a copy (copying it would
                # write a reference count into every Sage object's page,
                # ~1,500 copy-on-write faults: docs/WARM.md).
                cell.run_cell(cell.sage_preparse(src) if self.glb is not None else src, glb, loc={})
            except BaseException:
                pass
        # as the worker left them (run_cell's display and traceback source)
        builtins.__dict__.pop("_", None)
        linecache.cache.pop(cell.CELL, None)
        for f in (sys.stdout, sys.stderr):
            f.flush()

    def _reseed(self):
        # Each child would otherwise repeat the worker's random numbers.
        if "sage.misc.randstate" in sys.modules:
            sys.modules["sage.misc.randstate"].set_random_seed()
        if "numpy.random" in sys.modules:
            sys.modules["numpy.random"].seed()

    def _import_over(self):
        """Tell the worker the Sage import is over (failed or not) or was
        never to be (a job in another language): from here on the job
        says what happens (_import_died)."""
        if self.import_w >= 0:
            try:
                os.write(self.import_w, b".")
            except OSError:
                pass
            os.close(self.import_w)
            self.import_w = -1

    def _child_run(self, lang, code):
        if lang != "sage":
            self._import_over()
        def sage_glb():
            if self.import_error is not None:
                sys.stderr.write(self.import_error)
                return None
            if self.glb is not None:
                # The worker's pristine namespace, as this child's fork
                # has it: the job is the only one to run in it.
                return self.glb
            # One job (fresh): Sage is imported here, in the job's child,
            # and its import chatter is not the job's output.
            fresh = cell.sage_globals_quietly()
            self._import_over()
            if fresh is not None:
                # (not after a failed import: a half-imported randstate or
                # numpy.random, called with no memory left, may raise where
                # nothing says why)
                self._reseed()
            return fresh
        return cell.run_code(lang, code, self.shell, sage_glb)


def _child_exit(status):
    """Leave as `python3 file.py` would: wait for non-daemon
    threads, run atexit handlers, flush. Then close the output and the
    figure pipe before _exit, so the worker sees the end of the job at once
    (it reads the status from /proc while the kernel tears down the address
    space)."""
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
    figures.close()
    for fd in (1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(status)


def run_worker(kind, shell, own_pidns, warm_budget_mib, one_job=False):
    if kind not in ("sage", "python"):
        sys.stderr.write("sagebox worker: unknown kind %r\n" % kind)
        return 125
    # Everything a job's child needs is imported here, once: an import in
    # the child would be paid again by every job.
    import ast, atexit, ctypes, fcntl, json, linecache, resource, select, signal  # noqa: F401,E401
    import struct, tempfile, termios, threading, time, traceback  # noqa: F401,E401
    w = Worker(kind, shell, own_pidns, warm_budget_mib, one_job)
    try:
        w.start()
        rc = w.serve()
        if one_job:
            # The sandbox is discarded now: no interpreter teardown for
            # the host to wait for (nothing is buffered: frames are
            # written whole, the job's child is gone).
            os._exit(rc)
        return rc
    except BaseException:
        import traceback
        os.write(w.diag, ("sagebox worker: " + traceback.format_exc()).encode("utf-8", "replace"))
        return 3
