"""PARI's stack sized to the job's memory limit.

Sage (9.5 and 10.x alike: sage/libs/pari/__init__.py) starts PARI with a
1 MiB stack that may grow to a hard-coded 1 GiB. Under a smaller memory
limit PARI finds out only when it grows: the mprotect of the larger stack
fails against RLIMIT_DATA, PARI prints "*** Warning: not enough memory,
new PARI stack N" into the job's stderr and shrinks its maximum for the
rest of the process (or, under a memory cgroup, the job is OOM-killed).
So, once the job's limits are set and before its code runs, the maximum
is lowered to what the job can still add: a computation that outgrows it
gets PARI's own "the PARI stack overflows" error, and one that fits runs
as before."""
import resource
import sys

from . import memory

# The share of what the job may still allocate that PARI's stack may take:
# cypari2 copies each result from the stack to the Python heap, so a
# result as large as the stack needs as much again beside it.
SHARE = 2


def room_bytes(memory_bytes=None):
    """What this process may still allocate: by its RLIMIT_DATA (a warm
    job, a session, a sandbox without a memory cgroup), else by the
    sandbox's memory limit less what it holds (a fresh sandbox's cgroup,
    which the job cannot see: the one job is most of what it holds).
    None when neither bounds it."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if soft != resource.RLIM_INFINITY:
        return soft - memory.status_kib("VmData") * 1024
    if memory_bytes:
        return int(memory_bytes) - memory.status_kib("VmRSS") * 1024
    return None


MIB = 1 << 20
# A job's fit leaves a maximum that is at most this much above its share:
# the worker's prefit computes the share from the job's whole limit, the
# job from what is left of it (a few hundred KiB less), and a difference
# of one MiB in the rounding must not cost each job a new stack.
FIT_SLACK = 2 * MIB


def _pari():
    mod = sys.modules.get("sage.libs.pari")
    return getattr(mod, "pari", None)


def _share(room, size):
    return max((room // SHARE) & ~(MIB - 1), size)


def fit(memory_bytes=None):
    """Lower PARI's maximum stack to a share of the room left (see
    room_bytes; memory_bytes is the job's memory limit), if Sage's PARI is
    loaded and its maximum is larger (by more than FIT_SLACK). Never
    raises: a job runs with Sage's own sizing if this cannot be done."""
    pari = _pari()
    if pari is None:
        return
    try:
        room = room_bytes(memory_bytes)
        if room is None:
            return
        size, top = pari.stacksize(), pari.stacksizemax()
        want = _share(room, size)
        if want >= top - FIT_SLACK:
            return
        # Frees and maps the (empty) stack again: PARI first maps `want`
        # bytes writable to check they can be had, which fits in the room.
        pari.allocatemem(size, want, silent=True)
    except Exception:
        pass


def prefit(memory_bytes):
    """In a warm worker, once its jobs' memory limit is known (the same
    for every job of a worker: it is part of the pool's key): lower the
    maximum to the share a job's fit would choose, so that every job forked
    after it finds nothing left to do. A job's room is its limit (its
    RLIMIT_DATA is what it inherits plus the limit), less what it allocated
    before its fit; the fit in each new fork cost ~0.2 ms and ~380 page
    faults on the call's path (docs/WARM.md). Not when the worker's own
    RLIMIT_DATA has no room for PARI's check of the new size: the jobs
    then fit as before. Never raises."""
    pari = _pari()
    if pari is None or type(memory_bytes) is not int or memory_bytes <= 0:
        return
    try:
        size, top = pari.stacksize(), pari.stacksizemax()
        want = _share(memory_bytes, size)
        own = room_bytes()
        if want >= top or (own is not None and own < 2 * want):
            return
        pari.allocatemem(size, want, silent=True)
    except Exception:
        pass
