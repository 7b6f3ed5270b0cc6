"""A session's controller: the command of a session's sandbox. It speaks
the framed protocol (channel.py) with the host on its stdin/stdout, starts
the session's interpreter (interp.py) and relays its output, runs the
session's background jobs, and serves the file tools (files.py). It never
runs user code, and is undumpable with its signals blocked, so the
session's code cannot patch it, read it, or interrupt it.

  host -> controller                 controller -> host
  run {id, lang, code_bytes,         out {id, stream} + bytes ... then
       display[, interact]} + code  (stream: stdout, stderr, display)
      (interact: an interact's id;
       the code is its values' JSON)
                                     done {id, exit_code, signal,
                                           interrupted, restarted, reason,
                                           files, files_more} (written.py)
  interrupt {id}                     (SIGINT to the interpreter's group)
  kill {id}                          done ... restarted: the interpreter
                                     was killed and a new one started
  reset {id}                         reply {id, ok}: a fresh interpreter
  job {id, lang, code_bytes} + code  started {id}, out {id, stream} ...,
                                     done {id, exit_code, signal}; or
                                     reply {id, ok: false, error}: busy, or
                                     never forked (a Python job whose fork
                                     died before it reported it: nojob)
  jobkill {id}                       (its done, or that reply, follows)
  write {id, path, code_bytes, append} + bytes
                                     reply {id, ok, path, bytes | error, full}
  read {id, path, offset, length}    data {id} + bytes ..., then
                                     reply {id, ok, path, size, mtime}
  list {id, path}                    reply {id, ok, path, entries, cut}
  stat {id}                          reply {id, ok, rss_bytes, private_bytes}
  claim {id}                         (a spare became a session: no more warm-ups)
  run {id, op: save | restore}       done ... state: variables saved or loaded (state.py)
  put, sync, synced                  a named workspace's files (wsync.py)
                                     ready {pid, lang, ...} once, first

The host trusts none of it beyond this one session (every session is a
sandbox of its own): it holds its own deadlines and caps, and kills the
whole sandbox when the controller misbehaves or dies."""
import fcntl
import json
import os
import select
import signal
import sys
import time

from . import (background, cell, confine, driver_code, files, hooks, jobcg, magics, namespaces, netrelay, pipenv, procs,
               state, written, wsync)
from .channel import Channel, Malformed, wait_readable
from .interp import PyInterp, ShellInterp

FD_FLOOR = 200          # the protocol's fds are moved up here, away from 0-2
CHUNK = 1 << 16         # the most bytes in one out or data frame
IDLE_BEFORE_WARMUP = 0.05  # idle this long (no call, no job) before a warm-up step
STATUS_LINE_MAX = 256   # a status line longer than this is garbage
# Signals the controller never takes (the session's code runs as the same
# user; where Landlock has no signal scope it could otherwise stop us).
BLOCKED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
           signal.SIGALRM, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU}


class Controller:
    def __init__(self, lang, shell, own_pidns, workspace, limits):
        self.lang, self.shell, self.limits = lang, shell, limits
        self.ch = Channel(self._high(0), self._high(1))
        self.diag = self._high(2)
        # One cgroup per background job, where the sandbox gives them (jobcg.py)
        self.cgroups = jobcg.JobCgroups.from_env()
        self.null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        os.dup2(self.null, 0)
        os.dup2(self.null, 1)
        # Stops: the session's code reading or patching the controller
        # through /proc/PID/mem, or taking its channel from /proc/PID/fd.
        confine.set_dumpable(False)
        # Orphans of the session (double-forked jobs included) are ours.
        confine.become_subreaper()
        signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED)
        self.sandboxed = own_pidns and os.getpid() <= 2
        self.procs = procs.Procs(self.sandboxed)
        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.wake_r = wake_r
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        if workspace == "-":  # the host backend: its scratch directory
            workspace = os.getcwd()
        os.makedirs(workspace, 0o755, exist_ok=True)
        self.ws = files.Workspace(workspace)
        self.workspace = workspace
        import tempfile
        # Call scripts and job fifos: the session's own /tmp (mode 0700).
        self.private = tempfile.mkdtemp(prefix=".sagebox-session-", dir="/tmp" if self.sandboxed else None)
        self.interp = None
        self.call = None            # {"id", "interrupted"} while a call runs
        self.jobs = {}
        self.waiters = set()        # ended shell jobs' waiters, to be reaped
        self.pristine = None
        self.import_error = None
        self.lost = None            # why the interpreter was restarted between calls
        self.warmups = []
        self.interp_used = False    # a call, a job or a reset reached the interpreter
        self.mirror = None          # a named workspace's files (wsync.py), once the host restores

    def _high(self, fd):
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR)

    def send(self, hdr, payload=b""):
        self.ch.send(hdr, payload)

    # -- the interpreter
    def start(self):
        import traceback
        cell.prepare_dirs()
        pipenv.setup(self.workspace)  # network set: pip installs into /work/.local
        sage = None
        if self.lang == "sage":
            try:
                self.pristine = namespaces.sage_globals()
                cell.sage_preparse("x = 1\n")
                from sage.version import version as sage
                from .warmup import SAGE_WARMUPS
                self.warmups = list(SAGE_WARMUPS)
            except BaseException:
                self.import_error = traceback.format_exc()
        elif self.lang == "python":
            self.pristine = namespaces.python_globals()
        if self.lang != "shell":
            # What a call displays becomes items (the interpreter, a fork
            # of this controller, inherits the hooks; hooks.py).
            hooks.install()
            magics.load()  # IPython's transformer for %magics, once (magics.py)
        # The driver's own first-use costs (tokenize's regexes, the
        # compiler) are paid once here, not by every interpreter's first call.
        cell.run_cell("_sb = 1\n_sb\n", namespaces.python_globals(), "<cell 0>")
        import builtins
        builtins.__dict__.pop("_", None)
        import gc
        gc.freeze()
        self.spawn_interp()
        if self.lang == "shell" and not self.shell_ready():
            return False
        self.send({"type": "ready", "pid": os.getpid(), "lang": self.lang, "python": sys.version.split()[0],
                   "sage": sage, "import_error": self.import_error is not None, "sandboxed": self.sandboxed,
                   "beneath": self.ws.beneath, "driver_code": driver_code()})
        os.dup2(self.null, 2)
        return True

    def spawn_interp(self):
        if self.lang == "shell":
            env = dict(os.environ)
            self.interp = ShellInterp(self.shell, self.workspace, self.limits, env)
        else:
            glb = None if self.pristine is None else dict(self.pristine)
            self.interp = PyInterp(self.lang, glb, self.workspace, self.limits, self.pristine)
        if self.cgroups:
            self.cgroups.inside = None  # a fork of ours: born in our cgroup
        self.interp.start()
        self.st_buf = b""

    def warm_one(self):
        """One warm-up step while nothing happens; after the last, an
        interpreter no call has reached yet is replaced by a fork of the
        now warm controller (restarts are forks of it too)."""
        from . import warmup
        warmup.step(self.warmups, self.pristine, int(self.limits.get("warm_mib", 512)) * 1024, confine.libc())
        if not self.warmups and not self.interp_used:
            self.kill_interp()
            self.spawn_interp()

    def shell_ready(self):
        """Wait for the shell's first status line: it runs and is bash."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            r, _, _ = select.select([self.interp.st_r], [], [], 0.1)
            if r:
                line = self.read_status()
                if line is None:
                    break
                for ln in line:
                    if ln.startswith(b"ready ") and ln != b"ready none":
                        return True
                    sys.stderr.write("sagebox session: %s is not bash: shell sessions need bash\n" % self.shell)
                    return False
        sys.stderr.write("sagebox session: the shell %s did not start\n" % self.shell)
        return False

    def kill_interp(self):
        """SIGKILL the interpreter, its group and every process of its
        session (a job runs in a session of its own and is spared)."""
        it = self.interp
        if it is None or it.pid <= 0:
            return
        victims = {it.pid} | procs.in_session(it.pid)
        jobs = {j.pid for j in self.jobs.values() if j.pid}
        for p in victims:
            # a shell job is its own process group in the shell's session
            if p > 1 and p != os.getpid() and (p == it.pid or procs.group_of(p) not in jobs):
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            os.waitpid(it.pid, 0)
        except ChildProcessError:
            pass
        self.procs.reaped.pop(it.pid, None)
        it.close()
        self.interp = None

    def kill_detached(self):
        """SIGKILL every process of the session that no running job owns.
        What the session's code detached (setsid, double fork) is reparented
        to us, the subreaper, outside the interpreter's session and group:
        after a reset it went on changing /work and /tmp in the "fresh"
        session. A job's own processes stay below it however
        they detach (a Python job is a subreaper: interp.fork_job)."""
        def victims():
            keep = set(self.waiters) | netrelay.pids()
            for j in self.jobs.values():
                if j.status is None and j.pid:
                    keep |= procs.tree({j.pid, j.waiter or 0}) | procs.in_session(j.pid) | {j.waiter or 0}
                    keep |= background.cgroup_members(self, j)
                    group = procs.group_of(j.pid)
                    if group:
                        keep |= procs.in_group(group)
            return [p for p in self.procs.pids() if p not in keep]
        procs.kill_until_gone(victims)
        self.procs.reap()

    def restart(self, why):
        self.kill_interp()
        background.abandon_unstarted(self)
        if why == "reset":
            self.kill_detached()
        self.spawn_interp()
        if self.lang == "shell" and not self.shell_ready():
            raise RuntimeError("the shell could not be restarted")
        return why

    def read_status(self):
        """Complete status lines waiting on the status pipe; None at EOF."""
        try:
            b = os.read(self.interp.st_r, 4096)
        except BlockingIOError:
            return []
        if not b:
            return None
        self.st_buf += b
        *lines, self.st_buf = self.st_buf.split(b"\n")
        if len(self.st_buf) > STATUS_LINE_MAX:
            return None
        return lines

    # -- output
    def relay(self, fd, stream, jid):
        """Move what waits on fd to the host as out frames (or drop it:
        output between calls belongs to no call). Returns False at EOF."""
        for _ in range(16):
            try:
                b = os.read(fd, CHUNK)
            except BlockingIOError:
                return True
            if not b:
                return False
            if jid is not None:
                self.send({"type": "out", "id": jid, "stream": stream}, b)
        return True

    def drain_interp(self):
        it = self.interp
        cid = self.call["id"] if self.call else None
        for fd, name in ((it.out_r, "stdout"), (it.err_r, "stderr"), (it.disp_r, "display")):
            while fd >= 0 and self.relay(fd, name, cid):
                if not pending(fd):
                    break

    def finish_call(self, exit_code, sig=0, restarted=None):
        self.drain_interp() if self.interp else None
        c = self.call
        self.call = None
        done = {"type": "done", "id": c["id"], "exit_code": exit_code, "signal": sig,
                "interrupted": c["interrupted"], "restarted": restarted is not None}
        paths, more = written.changed(c.get("before"), self.workspace, pipenv.SKIP)
        if paths:
            done.update(files=paths, files_more=more)
        if restarted:
            done["reason"] = restarted
        if c.get("op"):
            done["state"] = state.read_report(c["report"])
        if self.mirror is not None:
            done["ws_dirty"] = self.mirror.dirty()
        self.send(done)

    def on_interp_gone(self, status):
        """The interpreter ended (exit, exit(), a signal, the OOM killer)."""
        code, sig = procs.split_status(status)
        how = ("exited with status %d" % code) if sig == 0 else ("was killed by signal %d" % sig)
        what = "shell" if self.lang == "shell" else "interpreter"
        if self.call is not None:
            self.drain_interp()
            self.interp.close()
            self.interp = None
            why = self.restart("the session's %s %s" % (what, how))
            self.finish_call(code if sig == 0 else -1, sig, why)
        else:
            self.lost = self.restart("the session's %s %s between calls" % (what, how))

    # -- requests
    def on_frame(self, hdr):
        t = hdr.get("type")
        rid = hdr.get("id")
        if not isinstance(rid, int):
            raise Malformed("a frame without an integer id")
        if t == "run":
            self.on_run(rid, hdr)
        elif t == "interrupt":
            if self.call and self.call["id"] == rid:
                self.call["interrupted"] = True
                self.interp.interrupt()
        elif t == "kill":
            if self.call and self.call["id"] == rid:
                why = self.restart("the code did not stop when interrupted, so the session's interpreter "
                                   "was restarted")
                self.finish_call(-1, signal.SIGKILL, why)
        elif t == "reset":
            self.interp_used = True
            self.reply_after(rid, lambda: (self.restart("reset"), {})[1])
        elif t == "job":
            background.start(self, rid, hdr)
        elif t == "jobkill":
            j = self.jobs.get(rid)
            if j:
                background.kill(self, j)
        elif t == "write":
            data = self.ch.exact(int(hdr["code_bytes"]))
            self.reply_after(rid, lambda: dict(zip(("path", "bytes"), self.ws.write(hdr.get("path"), data,
                                                                                  bool(hdr.get("append"))))))
        elif t == "read":
            self.reply_after(rid, lambda: self.read_file(rid, hdr))
        elif t == "list":
            self.reply_after(rid, lambda: dict(zip(("path", "entries", "cut"), self.ws.list(hdr.get("path")))))
        elif t == "stat":
            self.reply_after(rid, self.stat)
        elif t in ("put", "sync", "synced"):
            wsync.on_frame(self, t, rid, hdr)
        elif t == "claim":
            # A spare became a client's session: it stops warming up (its
            # CPU is the session's now), and answers at once from here on.
            self.warmups = []
        else:
            raise Malformed("unexpected frame %r" % (t,))

    def reply_after(self, rid, fn):
        try:
            r = fn()
            r.update({"type": "reply", "id": rid, "ok": True})
        except files.PathError as e:
            r = {"type": "reply", "id": rid, "ok": False, "error": str(e),
                 "full": isinstance(e, files.WorkspaceFull)}
        self.send(r)

    def on_run(self, rid, hdr):
        code = self.ch.exact(int(hdr["code_bytes"]))
        if self.call is not None:
            raise Malformed("a run frame while a call runs")
        self.call = {"id": rid, "interrupted": False, "before": written.snapshot(self.workspace, pipenv.SKIP)}
        self.interp_used = True
        lost, self.lost = self.lost, None
        if lost:
            msg = ("sagebox: note: %s; it was restarted, so the session's variables from before are gone "
                   "(files in %s are kept)\n" % (lost, files.WORKSPACE))
            self.send({"type": "out", "id": rid, "stream": "stderr"}, msg.encode())
        self.leave_job_cgroup()  # a call's processes are no job's
        op = hdr.get("op")
        if op in ("save", "restore") and self.lang != "shell":
            self.call.update(op=op, report=os.path.join(self.private, "state.json"))
            try:
                os.unlink(self.call["report"])
            except OSError:
                pass
            try:
                self.interp.send({"op": op, "report": self.call["report"]}, b"")
            except BrokenPipeError:
                pass
        elif self.lang == "shell":
            path = os.path.join(self.private, "cell.sh")
            with open(path, "wb") as f:
                f.write(code)
            self.interp.run(path)
        else:
            try:
                req = {"op": "run", "lang": hdr.get("lang"), "display": hdr.get("display")}
                if isinstance(hdr.get("interact"), str):
                    req["interact"] = hdr["interact"]  # code: the values (interact.py)
                self.interp.send(req, code)
            except BrokenPipeError:
                pass  # it died: its status says how (on_interp_gone)

    def leave_job_cgroup(self):
        if self.cgroups and self.interp is not None:
            self.cgroups.leave(self.interp.pid)

    def on_status_line(self, line):
        parts = line.split()
        if len(parts) == 2 and parts[0] == b"done" and parts[1].isdigit() and self.call is not None:
            self.finish_call(int(parts[1]) & 0xff)
        elif len(parts) in (3, 4) and parts[0] == b"job" and all(p.isdigit() for p in parts[1:]):
            j = self.jobs.get(int(parts[1]))
            if j is not None and j.pid is None:
                j.pid = int(parts[2])
                j.waiter = int(parts[3]) if len(parts) == 4 else None
                self.send({"type": "started", "id": j.id})
                self.leave_job_cgroup()  # the job is forked: its processes are in its cgroup
                if j.killed:
                    background.kill(self, j)  # cancelled before its start was reported
        elif len(parts) == 2 and parts[0] == b"nojob" and parts[1].isdigit():
            # A Python job's fork ended before it reported the job
            # (interp.fork_job): killed by a job_cancel, or no fork at all.
            j = self.jobs.get(int(parts[1]))
            if j is not None and j.pid is None:
                self.leave_job_cgroup()
                background.refuse(self, j, "the session could not fork the job (its limit on processes?)"
                                  if not j.killed else "it was cancelled before it started")
        elif len(parts) == 4 and parts[0] == b"ended" and all(p.isdigit() for p in parts[1:]):
            j = self.jobs.get(int(parts[1]))
            if j is not None and j.pid == int(parts[2]) and j.status is None:
                j.status = (int(parts[3]) & 0xff) << 8  # as an exit: the shell's $?
                j.ended_at = time.monotonic()
        # anything else: the session's own code wrote there; ignored

    # -- files
    def read_file(self, rid, hdr):
        fd, st, parts = self.ws.open_read(hdr.get("path"))
        try:
            off = max(0, int(hdr.get("offset") or 0))
            left = max(0, int(hdr.get("length") or 0))
            while left > 0:
                b = os.pread(fd, min(CHUNK, left), off)
                if not b:
                    break
                self.send({"type": "data", "id": rid}, b)
                off += len(b)
                left -= len(b)
        finally:
            os.close(fd)
        return {"path": files.shown(parts), "size": st.st_size, "mtime": int(st.st_mtime)}

    def stat(self):
        out = {"rss_bytes": 0, "private_bytes": 0}
        if self.interp is not None:
            from . import memory
            out["rss_bytes"] = memory.status_kib("VmRSS", self.interp.pid) * 1024
            out["private_bytes"] = memory.private_kib(self.interp.pid) * 1024
        return out

    # -- the loop
    def serve(self):
        while True:
            it = self.interp
            fds = {self.ch.rfd: "ch", self.wake_r: "wake", it.st_r: "st", it.out_r: "out", it.err_r: "err"}
            if it.disp_r >= 0:
                fds[it.disp_r] = "disp"
            for j in self.jobs.values():
                # A job's output waits until its start is reported: the
                # host takes a job's frames in that order (started, out...,
                # done) and would drop output that came first. (A killed
                # one's is read to its end: then it is over.)
                if j.pid is None and not j.killed:
                    continue
                for fd in j.streams:
                    fds[fd] = j
            timeout = None
            # (a shell job with no waiter, whose output has ended, is looked
            # at again: nothing else wakes us when bash reaps it, and
            # background.check tells when it is gone. A waiter's line, and a
            # Python job's or an orphaned job's exit, wake us themselves.)
            if any(j.status is not None or (self.lang == "shell" and j.pid is not None and j.waiter is None
                                            and not j.streams) for j in self.jobs.values()):
                timeout = background.JOB_EXIT_GRACE / 2
            idle = self.call is None and not self.jobs
            if self.warmups and idle:
                timeout = IDLE_BEFORE_WARMUP
            try:
                ready = wait_readable(fds, timeout)
            except InterruptedError:
                continue
            if not ready and self.warmups and idle:
                self.warm_one()
                continue
            for fd, ev in ready:
                what = fds[fd]
                if what == "ch":
                    try:
                        hdr, _ = self.ch.recv()
                    except EOFError:
                        return 0
                    self.on_frame(hdr)
                elif what == "wake":
                    try:
                        os.read(self.wake_r, 4096)
                    except BlockingIOError:
                        pass
                    self.procs.reap()
                    if self.interp is not None and self.interp.pid in self.procs.reaped:
                        self.on_interp_gone(self.procs.reaped.pop(self.interp.pid))
                elif what == "st" and it is self.interp:
                    lines = self.read_status()
                    if lines is None:
                        self.on_status_eof()
                    else:
                        for line in lines:
                            self.on_status_line(line)
                elif what in ("out", "err") and it is self.interp:
                    cid = self.call["id"] if self.call else None
                    self.relay(fd, "stdout" if what == "out" else "stderr", cid)
                elif what == "disp" and it is self.interp:
                    cid = self.call["id"] if self.call else None
                    if not self.relay(fd, "display", cid):
                        # its code closed the pipe: no more items from
                        # this interpreter (never a busy loop on the hangup)
                        os.close(fd)
                        it.disp_r = -1
                elif isinstance(what, background.Job) and what.id in self.jobs and fd in what.streams:
                    if not self.relay(fd, what.streams[fd], what.id):
                        os.close(fd)
                        del what.streams[fd]
                if self.interp is not it:
                    break  # restarted: its fds are gone
            background.check(self, time.monotonic())

    def on_status_eof(self):
        """The status pipe closed: the interpreter exited (its status says
        how), or its code closed the pipe (then it can never report, and
        is restarted)."""
        pid = self.interp.pid
        for _ in range(200):
            self.procs.reap()
            if pid in self.procs.reaped:
                self.on_interp_gone(self.procs.reaped.pop(pid))
                return
            time.sleep(0.001)
        self.kill_interp_and_report("the session's %s closed its status pipe" % self.lang)

    def kill_interp_and_report(self, why):
        if self.call is not None:
            self.drain_interp()
            why = self.restart(why)
            self.finish_call(-1, signal.SIGKILL, why)
        else:
            self.lost = self.restart(why)

    def shutdown(self):
        """The host closed the channel: the session ends. Everything in it
        dies (the sandbox's own pid namespace makes that the kernel's job
        too; on the host backend only our descendants are ours)."""
        self.kill_interp()
        self.procs.sweep([])
        import shutil
        shutil.rmtree(self.private, ignore_errors=True)
        if not self.sandboxed:
            shutil.rmtree(self.workspace, ignore_errors=True)


def pending(fd):
    from .channel import pending as p
    try:
        return p(fd)
    except OSError:
        return 0


def run_session(lang, shell, own_pidns, workspace, limits_json):
    if lang not in ("sage", "python", "shell"):
        sys.stderr.write("sagebox session: unknown language %r\n" % lang)
        return 125
    # What the interpreter needs is imported here, once.
    import ast, atexit, ctypes, linecache, resource, shutil, struct, tempfile, termios, threading  # noqa
    import traceback  # noqa: F401
    try:
        limits = json.loads(limits_json)
    except ValueError:
        limits = {}
    c = Controller(lang, shell, own_pidns, workspace, limits)
    try:
        if not c.start():
            return 3
        return c.serve()
    except BaseException:
        import traceback
        os.write(c.diag, ("sagebox session: " + traceback.format_exc()).encode("utf-8", "replace"))
        return 3
    finally:
        try:
            c.shutdown()
        except BaseException:
            pass
