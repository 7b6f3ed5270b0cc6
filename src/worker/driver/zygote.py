"""The warm worker. It runs as the sandbox's command, imports once, then
forks one child per job and never runs user code itself. It speaks the
framed protocol (channel.py) on its stdin/stdout; docs/WARM.md has it:

  host -> worker:  run {id, lang, timeout_ms, max_output, limits,
                        code_bytes, exit_grace_ms, max_display_bytes,
                        display} + code_bytes raw bytes
                   cancel {id}
  worker -> host:  ready {pid, kind, python, sage, import_error, sandboxed}
                   started {id}        the child has its code: the job began
                   out {id, stream} + bytes   stream: stdout, stderr, display
                   done {id, exit_code, signal, timed_out, cancelled, flooded}

A job's bytes never enter the worker's memory: its code is spliced from the
channel into the child's pipe, its output and what it displays (items.py) from
the child's pipes into the channel, and the files it leaves are listed and
removed by the janitor, a process of its own. Every later child is a fork
of the worker, and would inherit whatever the worker had held.

The host trusts none of it beyond one job: it keeps its own deadline and
caps, and kills the whole sandbox when the worker misbehaves.

A fresh sandbox (fresh isolation) runs the same worker for one job
(one_job): no janitor, spare or warm-up, the job may arrive before `ready`,
and the worker exits after it; the sandbox is discarded.

This module is the worker itself: its set-up, the serve loop and the
spares. One job's relay and deadline are job.py; what the child does once
forked (confine, reseed, pre-touch, run, exit) is child.py."""
import os
import sys

from . import cell, child, confine, driver_code, forker, hooks, job, magics, memory, namespaces, pari_stack, pipenv, sage_tmp
from .channel import Channel, Malformed
from .child import GO, us as _us
from .janitor import Janitor
from .procs import Procs, is_exiting
from .warmup import SAGE_WARMUPS
from . import warmup

FD_FLOOR = 200          # protocol fds are moved up here, away from 0-2
IDLE_BEFORE_WARMUP = 0.05
# A worker that starts under calls back to back (the pool grew for more
# clients, or replaced a worker that reached worker_max_jobs) is never idle
# IDLE_BEFORE_WARMUP: its warm-ups would never run, each job would pay the
# first factor's and the first plot's costs again in its own child, and,
# with warm-ups pending, no spare is forked ahead, so every child is forked
# on its job's path. So once this many jobs ran with warm-ups pending, one
# warm-up step runs after each job even though the next call is waiting
# (that call waits for the step, as one that comes during an idle step
# does). A short burst of calls stays below it.
WARM_UNDER_LOAD_AFTER = 10


class Worker:
    def __init__(self, kind, shell, own_pidns, warm_budget_mib, one_job=False):
        import fcntl
        import signal
        self.kind, self.shell, self.one_job = kind, shell, one_job
        self.warm_budget_kib = warm_budget_mib * 1024
        self.libc = confine.libc()
        confine.prepare_scope()  # for each child's scope, made once here
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
        # memory.huge_arenas(): None (installed) or why not
        self.huge_arenas = "not a warm Sage worker"
        self.dirty = None
        self.janitor = None
        self.spares = []  # pre-forked children, oldest first
        # forker.py: forks the Python worker's spares; its loop, loaded at
        # the start and dropped once the forker is made (None: not or no
        # longer to make)
        self.forker_start = None
        self.job_work = None
        self.warmups = list(SAGE_WARMUPS) if kind == "sage" and not one_job else []
        # Debug timing (the host's SAGEBOX_WARM_TRACE): once a job asked
        # for a trace, spares get a pipe for their own stamps, and the
        # between-jobs work is timed (reported with the next job).
        self.trace = False
        self.import_w = -1         # a fresh child's end of its import pipe (fork_spare)
        self.between = {}
        self.back_to_back = False
        self.jobs_done = 0
        self.cold_jobs = 0         # jobs run while warm-ups were pending
        self.stepped = False       # a warm-up step ran since the last job
        self.stamp_buf = bytearray(child.CHILD_STAMP_BYTES)  # (job._child_stamps)

    def _job_cgroup_fd(self, fcntl):
        """The jobs' cgroup's `tasks` (cgroup v1) or `cgroup.procs` (v2)
        (the native backend's SAGEBOX_JOB_CGROUP_FD; src/sandbox/native/
        cgroup.c nat_cgroup_job_file): each job's process moves itself in before
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

    def _own(self, fd):
        self.private.add(fd)
        return fd

    def close(self, fd):
        self.private.discard(fd)
        os.close(fd)

    # -- start
    def start(self):
        import traceback
        cell.prepare_dirs()
        # The backend started us in its work dir (/tmp/work in a sandbox).
        self.base = os.getcwd()
        # network set: pip installs into the job's work dir (pipenv.py)
        pipenv.setup(self.base)
        # Forked now, small and before any job: it inherits no job's bytes
        # and none of Sage. (One job: the sandbox is discarded after it.)
        if not self.one_job:
            self.janitor = Janitor(self.sandboxed, self.base, self.libc, self.diag,
                                   [fd for fd in self.private if fd != self.diag])
            for fd in self.janitor.fds:
                self._own(fd)
            # Python only: there the worker's own copy-on-write faults
            # after each fork were ~20% of a call back to back; for Sage
            # it measured faster on one machine kind and slower on another
            # (docs/WARM.md, "The forker").
            if self.sandboxed and self.kind == "python":
                self.forker_start = forker.load()
        sage_version = None
        # One job: Sage is imported by the job's child, not here, so that
        # the sandbox holds one Sage, as a fresh sandbox always did (a
        # child of a Sage worker would copy the pages it touches, and the
        # job would have less of the sandbox's memory).
        if self.kind == "sage" and not self.one_job:
            self.huge_arenas = memory.huge_arenas()
            try:
                self.glb = namespaces.sage_globals()
                cell.sage_preparse("x = 1\n")
                from sage.version import version as sage_version
            except BaseException:
                self.glb = None
                self.import_error = traceback.format_exc()
            if self.glb is not None:
                sage_tmp.check()  # jobs skip making SAGE_TMP at exit only to remove it
        # What a job displays becomes items (inherited by each child).
        hooks.install()
        # IPython's transformer for %magics and !cmd, loaded once here, not
        # by every job that uses them (one job: only by a job that does)
        if not self.one_job:
            magics.load()
        # The driver's own first-use costs (tokenize's regexes, the
        # compiler) are paid here, not by each job's child.
        cell.run_cell("_sb = 1\n_sb\n", namespaces.python_globals())
        import builtins
        builtins.__dict__.pop("_", None)  # as in a fresh interpreter
        import gc
        gc.freeze()  # (a full collection waits for the first idle moment)
        self.ch.send({"type": "ready", "pid": os.getpid(), "kind": self.kind,
                      "python": sys.version.split()[0], "sage": sage_version,
                      "import_error": self.import_error is not None,
                      "sandboxed": self.sandboxed, "driver_code": driver_code(),
                      "object_arenas": "huge pages" if self.huge_arenas is None
                      else "CPython's own: " + self.huge_arenas})
        # From here the worker itself prints nothing: warm-up chatter goes
        # to /dev/null, fatal errors to the saved stderr.
        os.dup2(self.null, 2)
        self._baseline()

    def _baseline(self):
        if self.janitor:
            self.dirty = self.dirty or self.janitor.ask({"op": "baseline"})

    def _warm_one(self):
        self._drop_spares()  # forked before this warm-up: they would miss it
        if warmup.step(self.warmups, self.glb, self.warm_budget_kib, self.libc):
            self._baseline()  # (a cell may have written files: matplotlib's cache)

    # -- main loop
    def serve(self):
        import select
        if self.one_job:
            return self._serve_one()
        while self.dirty is None:
            if self.warmups:
                if self.cold_jobs >= WARM_UNDER_LOAD_AFTER and not self.stepped:
                    r = None  # under load: one step now, the call waits
                else:
                    r, _, _ = select.select([self.ch.rfd], [], [], IDLE_BEFORE_WARMUP)
                if not r:
                    self._warm_one()
                    self.stepped = True
                    continue
            elif not self.spares:
                if self.forker_start is not None:
                    # before the first spare: every spare is the forker's
                    start_fn, self.forker_start = self.forker_start, None
                    self.procs.forker = forker.start(self, start_fn)
                # One spare, forked after the job before it is gone (so no
                # job ever runs beside a waiting spare) and off the next
                # job's critical path. (A second spare measured no faster
                # for calls back to back: they are CPU-bound by fork,
                # teardown and copy-on-write, not by waiting.)
                t = _us()
                sp = self.fork_spare()
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
            # spare is forked while this job runs (see job.run). Not for the
            # first job: a one-shot `sagebox run` has no next one.
            self.back_to_back = self.jobs_done > 0 and _us() - idle_from < job.BACK_TO_BACK_US
            if t == "run":
                job.run(self, hdr, payload)
                self.jobs_done += 1
                self.cold_jobs += 1 if self.warmups else 0
                self.stepped = False
                if self.jobs_done == 1 and isinstance(hdr.get("limits"), dict):
                    # later spares inherit PARI's stack fitted to the jobs' limit
                    pari_stack.prefit(hdr["limits"].get("memory_bytes"))
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
        job.run(self, hdr, payload)
        return 0

    def _reset(self):
        """Between jobs: the next job must find what a fresh sandbox has."""
        self.procs.reap()
        if self.janitor:
            self.dirty = self.dirty or self.janitor.ask({"op": "reset", "job_work": self.job_work})

    # -- the spare: the next job's child, forked and set up ahead of time
    def fork_spare(self, pretouch_after=0.0):
        """Fork the child the next job will run in, off the job's critical
        path: it sets itself up and waits for its job on a private pipe.
        pretouch_after: how long after its go it waits for a job before it
        pre-touches (None: a job is already here, no time to pre-touch)."""
        fds = {}
        # "import": a fresh sandbox's child imports Sage itself and says on
        # this pipe when the import is over (see job._import_died)
        importing = self.one_job and self.kind == "sage"
        names = ("job", "out", "err", "disp") + (("trace",) if self.trace else ()) + (("import",) if importing else ())
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
            pid = self._fork_by_forker(fds, pretouch_after)
            if pid is None:
                pid = os.fork()
        except (OSError, forker.Lost) as e:
            # (out of pids, memory or fds: the caller decides whether that
            # is fatal)
            for pair in fds.values():
                for fd in pair:
                    self.close(fd)
            if work != self.base:
                os.rmdir(work)
            if isinstance(e, forker.Lost):
                # It may have forked a spare with these pipes before it
                # stopped answering: the worker's own spare gets pipes of
                # its own, or two processes would share the next job's
                # code and output.
                return self.fork_spare(pretouch_after)
            raise
        if pid == 0:
            keep = (fds["job"][0], fds["out"][1], fds["err"][1], fds["disp"][1])
            trace_w = fds["trace"][1] if self.trace else -1
            self.import_w = fds["import"][1] if importing else -1
            child.run(self, work, keep, [fd for fd in self.private
                                         if fd not in keep and fd not in (trace_w, self.job_cgroup, self.import_w)],
                      pretouch_after, trace_w)
        for name in names:
            self.close(fds[name][1] if name != "job" else fds[name][0])
        return {"pid": pid, "job_w": fds["job"][1], "out_r": fds["out"][0],
                "err_r": fds["err"][0], "disp_r": fds["disp"][0], "work": work, "go": False,
                "trace_r": fds["trace"][0] if self.trace else -1,
                "import_r": fds["import"][0] if importing else -1}

    def _fork_by_forker(self, fds, pretouch_after):
        """The spare's pid, forked by the forker with the spare's ends of
        fds; None when there is no forker: the caller forks. forker.Lost
        when it did not answer (it is then gone)."""
        fk = self.procs.forker
        if fk is None:
            return None
        ends = [fds["job"][0], fds["out"][1], fds["err"][1], fds["disp"][1]]
        if self.trace:
            ends.append(fds["trace"][1])
        pid = fk.fork(ends, pretouch_after, self.trace, self.procs.reaped)
        if pid is None:
            self.procs.lose_forker()
            raise forker.Lost()
        return pid

    def _go(self, sp):
        """Let a spare go on to its pre-touch. Only once the sandbox has
        been reset after the previous job: the pre-touch runs Sage, which
        may read files under /tmp, and must not read what a job left
        there. (A spare that died meanwhile is found by take_spare.)"""
        if not sp["go"]:
            sp["go"] = True
            try:
                os.write(sp["job_w"], GO)
            except OSError:
                pass

    def _spare_fds(self, sp):
        return [sp[k] for k in ("job_w", "out_r", "err_r", "disp_r", "trace_r", "import_r") if sp[k] >= 0]

    def _drop_spare(self, sp):
        import signal
        self.spares.remove(sp)
        for fd in self._spare_fds(sp):
            self.close(fd)
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

    def take_spare(self):
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
        sp = self.fork_spare(pretouch_after=None)
        self._go(sp)
        return sp



def run_worker(kind, shell, own_pidns, warm_budget_mib, one_job=False):
    if kind not in ("sage", "python"):
        sys.stderr.write("sagebox worker: unknown kind %r\n" % kind)
        return 125
    # Everything a job's child needs is imported here, once: an import in
    # the child would be paid again by every job. Not threading: once
    # imported, its at-fork hook runs Python in every fork (~0.28 ms of a
    # bare fork here, docs/WARM.md); a job that uses threads
    # imports it, as `python3 file.py` does. (Sage imports it anyway.)
    import ast, atexit, ctypes, fcntl, json, linecache, resource, select, signal  # noqa: F401,E401
    import struct, termios, time, traceback  # noqa: F401,E401
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
