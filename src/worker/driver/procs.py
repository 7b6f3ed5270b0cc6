"""Processes: reaping, the sweep that kills whatever a job left running,
and reading a process's state from /proc/PID/stat."""
import os
import time

# After SIGKILL, how long the processes of a job may take to disappear.
REAP_GRACE = 2.0
# /proc/PID/stat, the fields after "(comm)" (0 is field 3, `state`).
STAT_PPID = 1            # field 4
STAT_PGRP = 2            # field 5
STAT_SESSION = 3         # field 6
STAT_FLAGS = 6           # field 9
STAT_VSIZE = 20          # field 23: 0 once the address space is detached
STAT_EXIT_CODE = 49      # field 52 (Linux 3.5)
PF_EXITING = 0x4         # include/linux/sched.h: getting shut down

# A process's comm is chosen by the job (prctl PR_SET_NAME): it is read into
# this buffer only, and wiped after each read, so that no job's bytes stay
# in the worker's heap for a later job's child to inherit.
_stat_buf = bytearray(4096)


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command name, as bytes.
    OSError when the process is gone; ValueError when unreadable."""
    fd = os.open("/proc/%d/stat" % pid, os.O_RDONLY | os.O_CLOEXEC)
    try:
        n = os.readv(fd, [_stat_buf])
    finally:
        os.close(fd)
    try:
        end = _stat_buf.rfind(b")", 0, n)
        if end < 0:
            raise ValueError("no ')' in /proc/%d/stat" % pid)
        return bytes(_stat_buf[end + 1:n]).split()
    finally:
        _stat_buf[:n] = bytes(n)


def is_exiting(pid):
    """True when pid has begun to exit (PF_EXITING) or is gone."""
    try:
        return bool(int(stat_fields(pid)[STAT_FLAGS]) & PF_EXITING)
    except (OSError, ValueError, IndexError):
        return True


def settled_exit_code(fields):
    """The wait status in /proc/PID/stat's fields once the kernel has stored
    it, else None. do_exit() sets PF_EXITING first (exit_signals), stores
    the status later (`tsk->exit_code = code`, after the accounting, which
    can sleep on the mmap lock or lose the CPU), then detaches the address
    space (exit_mm: `mm = NULL`, before the slow unmapping). Between the
    first two, field 52 reads 0: trusting it then reported a job that
    raised as a success (seen under load). So the status counts only once
    vsize is 0, i.e. the address space is detached."""
    if (len(fields) > STAT_EXIT_CODE and int(fields[STAT_FLAGS]) & PF_EXITING
            and int(fields[STAT_VSIZE]) == 0):
        return int(fields[STAT_EXIT_CODE])
    return None


def may_read(pid):
    """Whether the kernel lets us read pid's private state (a ptrace read
    check, the one /proc/PID/stat makes before it shows the exit code: it
    shows 0 otherwise). A job that made itself non-dumpable (prctl
    PR_SET_DUMPABLE 0) fails it for an unprivileged worker, and every
    failure of such a job read as a success. /proc/PID/fdinfo makes the
    same check when it is opened. Once the process is exiting it runs no
    more code, so the answer cannot change after this."""
    try:
        fd = os.open("/proc/%d/fdinfo" % pid, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def exiting_status(pid, tries=20):
    """The wait status of a child that is exiting but not yet reaped, read
    from /proc (settled_exit_code, may_read): the kernel's, which the job's
    code cannot write. None when it is not that far (yet) or not readable:
    the caller then waits for the real one (waitpid). Lets the result go
    out while the kernel still unmaps a copy of Sage."""
    for _ in range(tries):
        try:
            st = settled_exit_code(stat_fields(pid))
            if st is not None:
                return st if may_read(pid) else None
        except (OSError, ValueError, IndexError):
            return None
        time.sleep(0.0001)
    return None


def _members(field, value):
    """Pids whose /proc/PID/stat field equals value."""
    out = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if int(stat_fields(int(name))[field]) == value:
                    out.add(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def tree(roots):
    """roots (those alive) and all their descendants. A subreaper's
    descendants stay below it however they detach (setsid, double fork)."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent[int(name)] = int(stat_fields(int(name))[STAT_PPID])
            except (OSError, ValueError, IndexError):
                pass
    found, changed = {p for p in roots if p in parent}, True
    while changed:
        changed = False
        for p, pp in parent.items():
            if p not in found and pp in found:
                found.add(p)
                changed = True
    return found


def kill_until_gone(victims, deadline_s=2.0):
    """SIGKILL what victims() names, again and again until it names none
    not yet killed (what they forked meanwhile), for at most deadline_s.
    Returns (the pids killed, whether it got to the end in time)."""
    import signal
    killed = set()
    deadline = time.monotonic() + deadline_s
    while True:
        new = [p for p in victims() if p > 1 and p != os.getpid() and p not in killed]
        if not new:
            return killed, True
        for p in new:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
            killed.add(p)
        if time.monotonic() > deadline:
            return killed, False


def in_session(sid):
    """Every process of the session sid (a session's interpreter, a job)."""
    return _members(STAT_SESSION, sid)


def in_group(pgid):
    return _members(STAT_PGRP, pgid)


def holding(paths):
    """Pids (not ours) with one of the files at paths open, matched by
    device and inode: a job's processes by its output fifos, when its
    pid was never reported."""
    want = set()
    for path in paths:
        try:
            st = os.stat(path)
            want.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    out = set()
    me = os.getpid()
    for name in os.listdir("/proc") if want else ():
        if not name.isdigit() or int(name) == me:
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % name)
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat("/proc/%s/fd/%s" % (name, fd))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in want:
                out.add(int(name))
                break
    return out


def group_of(pid):
    try:
        return int(stat_fields(pid)[STAT_PGRP])
    except (OSError, ValueError, IndexError):
        return None


class Procs:
    """sandboxed: we are the sandbox's pid 1 or 2 in a pid namespace of our
    own, so every other process in it is a job's; otherwise (the host
    backend) only our descendants are."""

    def __init__(self, sandboxed):
        self.sandboxed = sandboxed
        self.reaped = {}   # pid -> wait status
        # forker.Forker: its children's statuses come from it, not waitpid
        self.forker = None

    def reap(self):
        while True:
            try:
                p, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if p == 0:
                break
            self.reaped[p] = st
        fk = self.forker
        if fk is not None and (fk.pid in self.reaped or not fk.drain(self.reaped)):
            self.lose_forker()

    def lose_forker(self):
        """The forker is gone or stuck: killed, the worker forks again
        itself. Its children, orphaned, are ours (we are the subreaper)."""
        import signal
        fk, self.forker = self.forker, None
        if fk is None:
            return
        fk.close()
        if fk.pid not in self.reaped:
            try:
                os.kill(fk.pid, signal.SIGKILL)
                os.waitpid(fk.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.reaped.pop(fk.pid, None)

    def pids(self):
        if self.sandboxed:
            return [int(n) for n in os.listdir("/proc") if n.isdigit()]
        return self.descendants()

    def descendants(self):
        me = os.getpid()
        return tree({me}) - {me}

    def sweep(self, exempt, wait_for=lambda p: True):
        """SIGKILL every process but `exempt` (and the sandbox's init), until
        none is left, then wait until those that wait_for(pid) selects are
        reaped. A job's processes cannot hide from this by setsid or double
        fork: it goes by the pid namespace (or, on the host backend, by our
        subreaper subtree), not by process group. Once SIGKILLed, a process
        can neither fork nor run code again. Returns None, or what went
        wrong (the worker must then retire)."""
        exempt = set(exempt)
        if self.forker is not None:
            exempt.add(self.forker.pid)
        deadline = time.monotonic() + REAP_GRACE
        killed, done = kill_until_gone(lambda: [p for p in self.pids() if p not in exempt], REAP_GRACE)
        if not done:
            return "processes of a job could not be killed"
        waiting = {p for p in killed if wait_for(p)}
        while waiting:
            self.reap()
            # (the forker's children are reaped by it, which then says so)
            reporter = self.forker.children if self.forker is not None else ()
            waiting = {p for p in waiting if p not in self.reaped
                       and (p in reporter or os.path.exists("/proc/%d" % p))}
            if not waiting:
                break
            if time.monotonic() > deadline:
                return "processes of a job could not be reaped"
            time.sleep(0.0005)
        return None


def split_status(status):
    """(exit code, signal) of a wait status: (code, 0) when it exited,
    (-1, signal) when killed, (-1, 0) otherwise."""
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status), 0
    if os.WIFSIGNALED(status):
        return -1, os.WTERMSIG(status)
    return -1, 0
