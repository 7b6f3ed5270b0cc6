"""The between-jobs reset of a warm worker's sandbox, done by the janitor:
a small process forked once when the worker starts, before Sage is
imported and before any job ran.

Why a process of its own: resetting means listing the names a job left in
/tmp, and reading files. Had the worker done it, those names and bytes
would sit freed in its heap, and every later job's child, a fork of the
worker, would inherit them. The janitor is undumpable like
the worker (a fork keeps that), no job is ever forked from it, and a job
cannot signal it where Landlock scopes signals.

What it resets (sandboxed workers; see docs/WARM.md):
- the work directory is emptied (recreated when the job replaced it);
- in /tmp and /dev/shm everything that is not the worker's own (the
  baseline, taken after start and after each warm-up) is removed, whatever
  the job made of it: any depth, mode-0 directories, fifos, sockets,
  symlink loops, long names, huge numbers of files (a time budget);
- modes of the baseline's entries are restored;
- System V IPC objects are removed;
- a baseline file the job changed (by inode, mode, size, times or, for a
  write through a shared mapping that updates no time, by content: its
  bytes, kept here, or a hash past KEEP_BYTES_MAX)
  makes the worker retire after this job.
Nothing here may crash on what a job can create: an unexpected error is
logged (on the worker's stderr) and makes the worker retire."""
import os
import stat
import time

from .rmtree import O_DIR, OutOfTime, Remover

WORK_ROOTS = ("/tmp", "/dev/shm")
# The reset gives up after this long (a job that made millions of files):
# the worker retires and its whole sandbox goes.
RESET_BUDGET = 5.0
# How long the worker waits for the janitor's answer before it retires.
ANSWER_TIMEOUT = RESET_BUDGET + 5.0
HASH_CHUNK = 1 << 20
# The worker's own files are compared by their bytes, kept here (in the
# janitor: no job is forked from it), up to this much in all; past it, by a
# hash. Reading and comparing the Sage worker's 14 files (~250 KB) takes
# ~70 µs, hashing them ~260 µs, at every reset (docs/WARM.md).
KEEP_BYTES_MAX = 1 << 20


def scan(roots, skip):
    """path -> lstat of every entry under roots but skip (the work dir):
    the worker's own files. Iterative; never follows symlinks."""
    out = {}
    todo = []
    for root in roots:
        try:
            out[root] = os.lstat(root)
            todo.append(root)
        except OSError:
            pass
    while todo:
        top = todo.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError:
            continue
        for ent in entries:
            if ent.path == skip:
                continue
            try:
                st = ent.stat(follow_symlinks=False)
            except OSError:
                continue
            out[ent.path] = st
            if stat.S_ISDIR(st.st_mode):
                todo.append(ent.path)
    return out


def contents(path, st, keep):
    """A regular file's contents: ("bytes", its bytes) when keep (the
    caller has checked st.st_size against what it keeps; one byte more is
    read, so that a file that grew differs), else ("hash", a hash of
    them); None when it cannot be read."""
    import hashlib
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_ino != st.st_ino:
            return None
        if keep:
            want = st.st_size + 1
            data = b""
            while len(data) < want:
                more = os.read(fd, want - len(data))
                if not more:
                    break
                data += more
            return ("bytes", data)
        h = hashlib.blake2b()
        while True:
            b = os.read(fd, HASH_CHUNK)
            if not b:
                return ("hash", h.hexdigest())
            h.update(b)
    except OSError:
        return None
    finally:
        os.close(fd)


def identity(path, st, with_contents=True, keep=False):
    """What must not change about one of the worker's own files. A
    directory's times change when entries come and go (the reset handles
    those); a file written through a shared mapping may change no time at
    all (tmpfs, after the pages were read-faulted): hence its contents,
    kept (keep) or hashed."""
    if stat.S_ISDIR(st.st_mode):
        return (st.st_ino, st.st_mode)
    ident = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if stat.S_ISREG(st.st_mode) and with_contents:
        ident += (contents(path, st, keep),)
    return ident


class Reset:
    """The janitor's state: the baseline, and the reset itself."""

    def __init__(self, sandboxed, work, libc, log, roots=WORK_ROOTS):
        self.sandboxed, self.work, self.libc, self.log = sandboxed, work, libc, log
        self.roots = roots
        self.work_mode = os.stat(work).st_mode
        self.baseline = {}

    def take_baseline(self):
        if not self.sandboxed:
            return None
        self.baseline, kept = {}, 0
        for p, st in scan(self.roots, self.work).items():
            keep = stat.S_ISREG(st.st_mode) and kept + st.st_size <= KEEP_BYTES_MAX
            kept += st.st_size if keep else 0
            self.baseline[p] = identity(p, st, keep=keep)
        return None

    def remove(self, path):
        """Remove one path (the host backend's per-job directory)."""
        rm = Remover(time.monotonic() + RESET_BUDGET)
        parent = os.open(os.path.dirname(path) or "/", O_DIR)
        try:
            rm.entry(parent, os.path.basename(path))
        finally:
            os.close(parent)
        if rm.failed:
            self.log("cannot remove %s: %s" % (path, rm.failed[:5]))
            return "cannot remove a job's directory"
        return None

    def reset(self, job_work):
        if not self.sandboxed:
            # host backend (no isolation): only the job's own directory
            return self.remove(job_work) if job_work else None
        rm = Remover(time.monotonic() + RESET_BUDGET)
        os.chdir("/")
        self._restore_modes()
        self._empty_work(rm)
        self._remove_new(rm)
        problem = None
        if rm.failed:
            self.log("could not remove: %s" % rm.failed[:10])
            problem = "cannot remove what the job left"
        changed = self._changed()
        if changed:
            self.log("the job changed files the worker keeps: %s" % ", ".join(changed[:5]))
            problem = problem or "the job changed files the worker keeps"
        if os.listdir(self.work):
            problem = problem or "cannot empty the work directory"
        self.clear_ipc()
        return problem

    def _restore_modes(self):
        # Modes first: a job may have made a directory unreadable.
        want = [(self.work, None, self.work_mode)]
        want += [(p, ident[0], ident[1]) for p, ident in self.baseline.items()]
        for p, ino, mode in want:
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if (ino is None or st.st_ino == ino) and st.st_mode != mode and not stat.S_ISLNK(st.st_mode):
                try:
                    os.chmod(p, mode & 0o7777)
                except OSError:
                    pass

    def _empty_work(self, rm):
        st = None
        try:
            st = os.lstat(self.work)
        except FileNotFoundError:
            pass
        if st is None or not stat.S_ISDIR(st.st_mode):
            if st is not None:
                parent = os.open(os.path.dirname(self.work), O_DIR)
                try:
                    rm.entry(parent, os.path.basename(self.work))
                finally:
                    os.close(parent)
            os.mkdir(self.work, self.work_mode & 0o7777)
        self._remove_entries(rm, self.work, lambda name: True)

    def _remove_entries(self, rm, d, unwanted):
        try:
            fd = os.open(d, O_DIR)
        except OSError:
            return
        try:
            for name in os.listdir(fd):
                if unwanted(name):
                    rm.entry(fd, name)
        finally:
            os.close(fd)

    def _remove_new(self, rm):
        """Whatever is not the worker's own, in the worker's own
        directories (the baseline's; a replaced one counts as changed)."""
        for d, ident in list(self.baseline.items()):
            if len(ident) != 2:
                continue   # not a directory
            try:
                st = os.lstat(d)
            except OSError:
                continue
            if st.st_ino != ident[0] or not stat.S_ISDIR(st.st_mode):
                continue
            prefix = d.rstrip("/") + "/"
            self._remove_entries(rm, d, lambda name: prefix + name not in self.baseline
                                 and prefix + name != self.work)

    def _changed(self):
        now = {}
        for p, ident in self.baseline.items():
            try:
                st = os.lstat(p)
            except OSError:
                now[p] = None
                continue
            # Read only when everything else still matches (the size
            # too): a file that already differs need not be read (it may
            # be huge now). Compared as the baseline has it: bytes or hash.
            cheap = identity(p, st, with_contents=False)
            kept = len(ident) > len(cheap) and ident[-1] is not None and ident[-1][0] == "bytes"
            now[p] = identity(p, st, keep=kept) if cheap == ident[:len(cheap)] else cheap
        return sorted(p for p in self.baseline if now.get(p) != self.baseline[p])

    def clear_ipc(self):
        """System V shared memory, semaphores and message queues outlive
        their creator: remove whatever a job made."""
        IPC_RMID = 0
        ops = (("shm", self.libc.shmctl), ("sem", self.libc.semctl), ("msg", self.libc.msgctl))
        for name, ctl in ops:
            try:
                with open("/proc/sysvipc/" + name) as f:
                    rows = f.read().splitlines()[1:]
            except OSError:
                continue
            for row in rows:
                try:
                    ipc_id = int(row.split()[1])
                except (IndexError, ValueError):
                    continue
                if name == "sem":
                    ctl(ipc_id, 0, IPC_RMID)
                else:
                    ctl(ipc_id, IPC_RMID, None)


def serve(ch, reset, log):
    """The janitor's loop: one request, one answer, until the worker
    closes the channel. Requests: {"op": "baseline"}, {"op": "reset",
    "job_work": path or null}, {"op": "remove", "path": p}. Answers:
    {"problem": null or a short reason (no job-chosen names: those go to
    the log only, never into the worker's memory)}."""
    import traceback
    while True:
        try:
            req, _ = ch.recv()
        except EOFError:
            return 0
        op = req.get("op")
        try:
            if op == "baseline":
                problem = reset.take_baseline()
            elif op == "reset":
                problem = reset.reset(req.get("job_work"))
            elif op == "remove":
                problem = reset.remove(req["path"])
            else:
                problem = "unknown janitor request"
        except OutOfTime:
            log("the reset took more than %.0f s" % RESET_BUDGET)
            problem = "resetting the files took too long"
        except BaseException as e:
            # Where it failed, not the message: an OSError's names a job's
            # file, and the worker's stderr can reach a later job's error.
            log("the reset failed (%s), at:\n%s" % (type(e).__name__,
                                                    "".join(traceback.format_tb(e.__traceback__))))
            problem = "the reset failed (%s)" % type(e).__name__
        ch.send({"problem": problem})


class Janitor:
    """The worker's handle on its janitor process."""

    def __init__(self, sandboxed, work, libc, diag, close_in_child):
        from .channel import Channel
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        ans_r, ans_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            status = 3
            try:
                import signal
                signal.set_wakeup_fd(-1)   # the worker's, closed below
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(req_w)
                os.close(ans_r)
                for fd in close_in_child:
                    os.close(fd)
                _janitor_main(Channel(req_r, ans_w), sandboxed, work, libc, diag)
                status = 0
            except BaseException:
                pass
            os._exit(status)
        os.close(req_r)
        os.close(ans_w)
        self.pid = pid
        self.ch = Channel(ans_r, req_w, max_in=1 << 16)
        self.fds = (ans_r, req_w)

    def ask(self, req, timeout=ANSWER_TIMEOUT):
        """The janitor's answer: None (all well) or why the worker must
        retire."""
        import select
        import signal
        try:
            os.kill(self.pid, signal.SIGCONT)  # a job may have stopped it
            self.ch.send(req)
            r, _, _ = select.select([self.ch.rfd], [], [], timeout)
            if not r:
                return "the janitor did not answer in %.0f s" % timeout
            ans, _ = self.ch.recv()
        except (OSError, EOFError, ValueError) as e:
            return "the janitor is gone (%s)" % type(e).__name__
        problem = ans.get("problem")
        return None if problem is None else str(problem)


def _janitor_main(ch, sandboxed, work, libc, diag):
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    os.chdir("/")

    def log(msg):
        try:
            os.write(diag, ("sagebox worker janitor: %s\n" % msg).encode("utf-8", "replace"))
        except OSError:
            pass
    serve(ch, Reset(sandboxed, work, libc, log), log)
