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


def fit(memory_bytes=None):
    """Lower PARI's maximum stack to a share of the room left (see
    room_bytes; memory_bytes is the job's memory limit), if Sage's PARI is
    loaded and its maximum is larger. Never raises: a job runs
    with Sage's own sizing if this cannot be done."""
    mod = sys.modules.get("sage.libs.pari")
    pari = getattr(mod, "pari", None)
    if pari is None:
        return
    try:
        room = room_bytes(memory_bytes)
        if room is None:
            return
        size, top = pari.stacksize(), pari.stacksizemax()
        want = max((room // SHARE) & ~((1 << 20) - 1), size)
        if want >= top:
            return
        # Frees and maps the (empty) stack again: PARI first maps `want`
        # bytes writable to check they can be had, which fits in the room.
        pari.allocatemem(size, want, silent=True)
    except Exception:
        pass
