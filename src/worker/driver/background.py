"""A session's background jobs (the job tool), for its controller
(session.py): a job is a fork of the interpreter (interp.py) writing to two
fifos the controller relays; its start and, for a shell job, its status come
on the interpreter's status pipe. Every function takes the controller c."""
import os

from . import procs

JOB_EXIT_GRACE = 0.3    # a job's output may stay open this long after it exited
UNKNOWN_STATUS = 0x7f  # neither exited nor signalled: split_status gives (-1, 0)


class Job:
    def __init__(self, jid, out_path, err_path, fds):
        self.id, self.paths = jid, (out_path, err_path)
        self.streams = fds          # fd -> "stdout" | "stderr"
        self.pid = None
        self.waiter = None          # a shell job's waiting subshell (interp.py)
        self.status = None
        self.ended_at = None
        self.killed = False
        self.slot = None            # its cgroup (jobcg.py), where there are any
        self.go = None              # a shell job's start fifo (interp.SHELL_INIT)


def start(c, rid, hdr):
    """A job frame: the job's output fifos, then its code to the
    interpreter, which forks it (interp.py)."""
    code = c.ch.exact(int(hdr["code_bytes"]))
    if c.call is not None or rid in c.jobs:
        c.send({"type": "reply", "id": rid, "ok": False, "error": "the session is busy"})
        return
    out_p = os.path.join(c.private, "job-%d.out" % rid)
    err_p = os.path.join(c.private, "job-%d.err" % rid)
    fds = {}
    for p, name in ((out_p, "stdout"), (err_p, "stderr")):
        os.mkfifo(p, 0o600)
        # Read ends first, non-blocking: the job's open for writing
        # then never blocks.
        fds[os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)] = name
    j = c.jobs[rid] = Job(rid, out_p, err_p, fds)
    j.go = os.path.join(c.private, "job-%d.go" % rid)
    c.interp_used = True
    if c.cgroups is not None:
        # The interpreter forks the job inside the job's cgroup: nothing
        # the job forks can be born outside it (jobcg.py)
        j.slot = c.cgroups.take(rid, c.jobs)
        if j.slot is not None and not c.cgroups.enter(j.slot, c.interp.pid):
            c.cgroups.owner.pop(j.slot, None)
            j.slot = None
    if c.lang == "shell":
        path = os.path.join(c.private, "job-%d.sh" % rid)
        with open(path, "wb") as f:
            f.write(code)
        # The job waits on it until its waiter is its subreaper (interp.py)
        os.mkfifo(j.go, 0o600)
        c.interp.job(rid, path, out_p, err_p, j.go)
    else:
        c.interp.send({"op": "job", "id": rid, "lang": hdr.get("lang"), "out": out_p, "err": err_p}, code)


def cgroup_members(c, j):
    """Every process in j's cgroup (jobcg.py), but the interpreter (which
    is there for a moment while it forks the job)."""
    if j.slot is None:
        return set()
    return c.cgroups.members(j.slot) - ({c.interp.pid} if c.interp is not None else set())


def kill(c, j):
    """SIGKILL a job: every process of its cgroup where it has one (none
    can leave it: a shell job's setsid'ed double-forked grandchild
    outlived job_cancel), its process, its process group and
    its session (a shell job is a group in the shell's session; a Python
    job a session of its own). A job whose start was not reported (yet) is
    found by its cgroup and its output fifos: what holds them open, with
    their groups (the session's code can keep a start from being
    reported); should its report still come, it is killed then
    (Controller.on_status_line). A Python job's fork killed so before it
    reported the job's pid is reported by the interpreter instead
    (interp.fork_job: nojob; the controller then refuses the job)."""
    j.killed = True
    if j.pid is not None:
        roots = {j.pid: j.pid}
    else:
        roots = {p: procs.group_of(p) for p in procs.holding(j.paths)}
    spared = set() if c.interp is None else {c.interp.pid}

    def victims():
        # tree(): what a Python job detached (setsid, double fork)
        # stays below its root, a subreaper (job_cancel left
        # a setsid grandchild running)
        found = cgroup_members(c, j)
        if j.waiter:
            # a shell job's waiter is its subreaper (interp.py): what the
            # job detached is below it. (The waiter itself is spared: it
            # reports the job's status, and exits once all is gone.)
            found |= procs.tree({j.waiter}) - {j.waiter}
        for p, group in roots.items():
            found |= {p} | procs.in_session(p) | procs.tree({p})
            if group is not None and group not in spared:
                found |= procs.in_group(group)
        return found - spared
    procs.kill_until_gone(victims)


def abandon_unstarted(c):
    """After the interpreter died: the jobs it was forking will never be
    reported."""
    for j in [j for j in c.jobs.values() if j.pid is None]:
        refuse(c, j, "the session's interpreter ended while it was starting the job")


def refuse(c, j, why):
    """A job that will never be reported started: what of it runs is
    killed (found by its cgroup and fifos), and the host is told the
    session could not start it (it waits for its start, or for a
    cancelled one's end)."""
    kill(c, j)
    for fd in j.streams:
        os.close(fd)
    _remove_files(j)
    del c.jobs[j.id]
    c.send({"type": "reply", "id": j.id, "ok": False, "error": why})


def _remove_files(j):
    for p in (*j.paths, j.go):
        try:
            os.unlink(p)
        except OSError:
            pass


def check(c, now):
    """Jobs that ended: their status, their output's end, their done frame."""
    # A shell job's waiter is reparented to us (interp.py): once reaped,
    # its status is of no use.
    c.waiters -= {w for w in c.waiters if c.procs.reaped.pop(w, None) is not None}
    for j in list(c.jobs.values()):
        if j.status is None and j.pid is not None and j.pid in c.procs.reaped:
            j.status = c.procs.reaped.pop(j.pid)
            j.ended_at = now
        elif (j.status is None and j.pid is not None and not j.streams and not _exists(j.pid)
              and not (j.waiter and _exists(j.waiter)) and not _status_from_waiter(c, j)):
            # A shell job's status comes from the subshell that waits
            # for it (interp.py). Where that subshell is gone without
            # saying (the session's code killed it, or replaced
            # __sb_job), bash reaped the job and its status is lost:
            # its output has ended and it is gone, so it is over, with
            # an unknown status (-1), not "running".
            c.procs.reap()
            if j.pid in c.procs.reaped:
                j.status = c.procs.reaped.pop(j.pid)
            else:
                j.status = UNKNOWN_STATUS
            j.ended_at = now
        elif j.status is None and j.pid is None and j.killed and not j.streams:
            # Killed before its start was reported, and its output has
            # ended (what held it is gone): over, its status unknown.
            j.status = UNKNOWN_STATUS
            j.ended_at = now
        if j.status is not None and j.streams and now >= j.ended_at + JOB_EXIT_GRACE:
            kill(c, j)  # its leftovers held the output open
            for fd in list(j.streams):
                c.relay(fd, j.streams[fd], j.id)
                os.close(fd)
                del j.streams[fd]
        if j.status is not None and not j.streams:
            _remove_files(j)
            del c.jobs[j.id]
            if j.waiter:
                c.waiters.add(j.waiter)
            code, sig = procs.split_status(j.status)
            c.send({"type": "done", "id": j.id, "exit_code": code, "signal": sig, "killed": j.killed})


def _status_from_waiter(c, j):
    """Whether j's status has come, after reading what waits on the
    status pipe: a waiter writes its line before it exits, so once it
    is gone, its line is there."""
    lines = c.read_status() if c.interp is not None else None
    for line in lines or ():
        c.on_status_line(line)
    return j.status is not None


def _exists(pid):
    """Whether pid is a live process or a zombie of ours (not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True
