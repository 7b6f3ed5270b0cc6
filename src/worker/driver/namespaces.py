"""The globals a cell runs in: what `sage -q` gives a script (everything
of sage.all_cmdline), or a plain Python's. Used by the worker, the session
controller, a job's child, the cell and the magics (%run)."""
import os
import sys

from . import interact
from .channel import write_all


def sage_globals():
    # What `sage -q` gives a script: everything of sage.all_cmdline.
    import gc
    first = "sage.all_cmdline" not in sys.modules
    enabled = gc.isenabled()
    if first:
        # The import makes ~10^6 objects that live as long as the process,
        # and little garbage (~2,400 objects in cycles, Sage 9.5); with the
        # collector on, its passes walked those objects again and again:
        # ~100 ms of a ~680 ms import, paid by every first call, fresh call
        # and Sage session. Off during the import; its objects are then
        # frozen (never walked by a collection again: what the worker's and
        # the session's gc.freeze() before `ready` did anyway), and the
        # collector is as it was (a job that turned it off keeps it off).
        gc.disable()
    try:
        import sage.all_cmdline as allc
    finally:
        if first:
            gc.freeze()
            if enabled:
                gc.enable()
    glb = {k: v for k, v in vars(allc).items() if not k.startswith("__")}
    glb["__name__"] = "__main__"
    glb["__builtins__"] = __builtins__
    interact.install(glb)
    return glb


# Said when even the traceback of a failed Sage import could not be
# formatted for want of memory (made before any job, so it costs nothing then).
IMPORT_FAILED_NO_MEMORY = (b"Traceback (most recent call last):\n"
                           b"  (not formatted: the process ran out of memory)\n"
                           b"MemoryError: Sage could not be imported within the memory limit\n")
# Set aside before the import and given back when it fails: the memory to
# format and write why (under RLIMIT_DATA, an import that failed for want
# of memory can leave none; then the job ended with exit 1, saying nothing).
IMPORT_RESERVE = 4 << 20


def _reserve(n):
    """n bytes of address space that count against RLIMIT_DATA (private,
    writable) but are never touched (no page is faulted in), or None."""
    import mmap
    try:
        return mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError:
        return None


def sage_globals_quietly():
    """sage_globals() for a job whose own child imports Sage (a fresh
    sandbox's one-job worker): what the import prints is not the job's
    output. (Where the memory limit is RLIMIT_DATA, a user without a memory
    cgroup, PARI says "not enough memory, new PARI stack" three times while
    it sizes its stack; a warm worker imported Sage long before the job, so
    its jobs never show it.) When the import fails, what it printed comes
    first, then why, and the job fails as a warm job does (None: exit 1)."""
    import traceback
    for f in (sys.stdout, sys.stderr):
        f.flush()
    saved = [os.dup(1), os.dup(2)]
    chatter = os.memfd_create("sage-import", os.MFD_CLOEXEC)
    os.dup2(chatter, 1)
    os.dup2(chatter, 2)
    glb, failed = None, None
    # A crash in the import (C code that meets a failed allocation) would
    # otherwise run cysignals' crash report, which can deadlock on the
    # allocator's lock and hang the job until its timeout: die at once
    # instead (the worker says why, job._import_died).
    quiet = "CYSIGNALS_CRASH_QUIET" not in os.environ
    if quiet:
        os.environ["CYSIGNALS_CRASH_QUIET"] = "1"
    reserve = _reserve(IMPORT_RESERVE)
    try:
        try:
            glb = sage_globals()
        except BaseException:
            if reserve is not None:
                reserve.close()
            failed = traceback.format_exc().encode("utf-8", "replace")
    except MemoryError:
        # formatting the traceback itself ran out of memory: the import's
        # failure must still be said, and the job's fds given back
        failed = IMPORT_FAILED_NO_MEMORY
    finally:
        if reserve is not None:
            reserve.close()
        if quiet:
            os.environ.pop("CYSIGNALS_CRASH_QUIET", None)
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except (OSError, MemoryError, ValueError):
                pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
    if failed is not None:
        # by the kernel, not through our memory: the import may have
        # failed for want of it
        size = os.fstat(chatter).st_size
        off = 0
        while off < size:
            n = os.sendfile(2, chatter, off, size - off)
            if n <= 0:
                break
            off += n
        try:
            write_all(2, failed)
        except OSError:
            pass
    os.close(chatter)
    return glb


def python_globals():
    glb = {"__name__": "__main__", "__builtins__": __builtins__}
    interact.install(glb)
    return glb
