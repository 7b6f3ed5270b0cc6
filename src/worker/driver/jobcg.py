"""A session's job cgroups (the native backend's SAGEBOX_JOB_SLOTS_FD; see
src/sandbox/native/job_slots.c): one cgroup per running background job, so
that job_cancel finds every process of the job, however it detached (setsid,
a double fork, TERM/HUP/INT ignored). A process cannot leave its
cgroup: nothing in the sandbox can write to cgroupfs but these fds, which
only the controller holds (the interpreter closes them: interp.confine_child).

The controller moves its interpreter into a free slot just before the
interpreter forks a job, so that everything the job is and forks is born
there, and back to the sandbox's own cgroup once the job has started (or
before anything else reaches the interpreter). Where there are no slots
(Podman, Docker, the host backend, no delegated cgroup) a job is tracked by
the tree below its subreaper (background.kill; a shell job's is its waiter,
interp.SHELL_JOB_REAPER)."""
import fcntl
import os

ENV = "SAGEBOX_JOB_SLOTS_FD"
FD_FLOOR = 200


class JobCgroups:
    def __init__(self, home, slots):
        self.home = home            # the sandbox's cgroup.procs (write)
        self.slots = slots          # each slot's cgroup.procs (write): job-0, job-1, ...
        self.owner = {}             # slot fd -> job id
        self.inside = None          # the slot the interpreter is in

    @classmethod
    def from_env(cls):
        """The slots the sandbox gave us, moved above FD_FLOOR; None when
        there are none. The variable goes: the interpreter must not see it."""
        v = os.environ.pop(ENV, None)
        if not v:
            return None
        try:
            first, n = (int(x) for x in v.split(","))
        except ValueError:
            return None
        fds = []
        for fd in range(first, first + n + 1):
            fds.append(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FD_FLOOR))
            os.close(fd)
        return cls(fds[0], fds[1:])

    def fds(self):
        return [self.home, *self.slots]

    def members(self, slot):
        """The pids in a slot: the processes whose /proc/PID/cgroup names
        it. (Not its cgroup.procs: cgroup v1 serves a list cached for a
        second after each read, and a loop that kills until the list is
        empty saw the empty list of the job's start.) A process cannot
        change what the kernel writes there."""
        tail = b"/job-%d" % self.slots.index(slot)
        out = set()
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open("/proc/%s/cgroup" % name, "rb") as f:
                    lines = f.read().split(b"\n")
            except OSError:
                continue
            if any(ln.endswith(tail) and ln.split(b":")[1] in (b"", b"pids") for ln in lines if ln.count(b":") >= 2):
                out.add(int(name))
        return out

    def take(self, jid, running):
        """A slot for job jid, or None: one no running job owns and that is
        empty (a finished job's leftovers keep theirs)."""
        for s in self.slots:
            owner = self.owner.get(s)
            if (owner is None or owner not in running) and not self.members(s):
                self.owner[s] = jid
                return s
        return None

    def enter(self, slot, pid):
        """Move the interpreter pid into slot (before it forks a job).
        False when the kernel refused."""
        try:
            os.write(slot, b"%d" % pid)
        except OSError:
            return False
        self.inside = slot
        return True

    def leave(self, pid):
        """Move the interpreter back to the sandbox's own cgroup."""
        if self.inside is None:
            return
        self.inside = None
        try:
            os.write(self.home, b"%d" % pid)
        except OSError:
            pass  # it is gone

    def slot_of(self, jid):
        for s, owner in self.owner.items():
            if owner == jid:
                return s
        return None
