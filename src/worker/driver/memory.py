"""The warm worker's memory: how big it is, and keeping its pages shared
with its jobs' children (gc.freeze) and cheap to fork (huge pages)."""
import os

from .channel import write_all

# madvise(2) advice values (asm-generic/mman-common.h).
MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25          # Linux 6.1
HUGE_PAGE = 2 << 20         # a PMD-sized transparent huge page


def status_kib(field, pid="self"):
    """A "<field>: N kB" line of /proc/PID/status (VmRSS, VmData), or 0.
    Read as bytes with os.read: a job's child reads its VmData on the
    call's path, and in a new fork the first open() through io's text
    layer costs ~0.3 ms of faults where this costs ~0.1 (docs/WARM.md)."""
    key = b"\n" + field.encode() + b":"
    try:
        fd = os.open("/proc/%s/status" % pid, os.O_RDONLY | os.O_CLOEXEC)
        try:
            data = b"\n"
            while True:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(fd)
        at = data.find(key)
        if at >= 0:
            return int(data[at + len(key):data.index(b"\n", at + 1)].split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def private_kib(pid):
    """Memory only this process uses (Private_Clean + Private_Dirty of
    /proc/PID/smaps_rollup): what it adds to what it shares, or 0."""
    total = 0
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return total


def freeze():
    """Objects that exist now are never touched by a child's garbage
    collector, so their pages stay shared instead of being copied."""
    import gc
    gc.collect()
    gc.freeze()


def huge_arenas():
    """From now on CPython's object arenas are carved from adjacent 2 MiB
    chunks in transparent huge pages (src/worker/huge_arenas.c), not mmapped
    1 MiB at a time: what Sage's import allocates then costs each job's fork
    and exit one page-table entry per 2 MiB instead of 512 (the worker's
    entries copied at a fork: 26,500 -> 16,000, docs/WARM.md). Called before
    the import. None when installed, else why not; then the arenas stay
    CPython's own (it changes speed only)."""
    try:
        from . import huge_arenas_so
    except ImportError:
        return "not in this driver (only the bundle carries the library)"
    return set_arena_allocator(huge_arenas_so.data(), "sagebox_huge_arenas")


def set_arena_allocator(library, symbol):
    """Load `library` (a shared object's bytes) and make its
    PyObjectArenaAllocator `symbol` this process's. None, or why not."""
    import ctypes
    lib, why = load_library(library, "sagebox-huge-arenas")
    if lib is None:
        return why
    try:
        allocator = ctypes.c_void_p.in_dll(lib, symbol)
        ctypes.pythonapi.PyObject_SetArenaAllocator(ctypes.byref(allocator))
    except (OSError, AttributeError, ValueError) as e:
        return "cannot load it: %s" % e
    return None


_loaded = 0   # libraries load_library loaded


def load_library(library, name):
    """(a ctypes.CDLL of `library`, a shared object's bytes, loaded from a
    memfd, None) or (None, why not). The sandbox mounts no file of ours:
    the bytes come with the driver."""
    import ctypes
    import fcntl
    try:
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (OSError, AttributeError) as e:
        return None, "no memfd: %s" % e
    try:
        write_all(fd, library)
        # Sealed before it is mapped: nothing (a job that found a way to
        # the file) can change the code every later job's fork runs.
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        # A name of its own for each library: the memfd's number is free
        # again once closed, and dlopen returns the library it already
        # loaded under the same name (here: another library of ours).
        global _loaded
        _loaded += 1
        return ctypes.CDLL("/proc/self" + "/." * _loaded + "/fd/%d" % fd), None
    except (OSError, AttributeError, ValueError) as e:
        return None, "cannot load it: %s" % e
    finally:
        os.close(fd)


# What one warm-up step collapses (warmup.step): a call that comes while
# it runs waits for it, ~30-50 ms here for 16 MiB (the whole heap at once
# held the worker ~430 ms).
COLLAPSE_CHUNK = 16 << 20


def heap_chunks():
    """The writable anonymous mappings and the heap, each trimmed to whole
    huge pages and cut into pieces of at most COLLAPSE_CHUNK bytes:
    [(start, end)], lowest first; [] when /proc/self/maps cannot be read."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in maps:
        parts = line.split()
        if not parts[1].startswith("rw") or (len(parts) > 5 and parts[5] != "[heap]"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        lo, hi = (lo + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), hi & ~(HUGE_PAGE - 1)
        for at in range(lo, hi, COLLAPSE_CHUNK):
            out.append((at, min(at + COLLAPSE_CHUNK, hi)))
    return out


def collapse(libc, start, end):
    """Back [start, end) with transparent huge pages where the kernel can
    (MADV_COLLAPSE): fork then copies one page-table entry per 2 MiB
    instead of 512, and a job's exit unmaps as much faster. Best effort;
    the resident size hardly changes. (A range unmapped since heap_chunks
    read it fails with ENOMEM: nothing happens.)"""
    import ctypes
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise(start, end - start, MADV_HUGEPAGE)
    madvise(start, end - start, MADV_COLLAPSE)
