"""The fresh path: one sandbox per call, the seed's way. The code comes on
stdin until EOF and runs in this process."""
import os
import sys

from . import cell


def read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def quiet_sage_globals():
    """Sage's import as a warm worker does it, before the job: what the
    import prints is not the job's output. (Where the memory limit is
    RLIMIT_DATA, a user without a memory cgroup, PARI says "not enough
    memory, new PARI stack" three times while it sizes its stack; a warm
    worker imported Sage long before the job, so its jobs never show it.)
    When the import fails, what it printed comes first, then why, and the
    job fails as a warm job does (None: exit 1)."""
    import traceback
    for f in (sys.stdout, sys.stderr):
        f.flush()
    saved = [os.dup(1), os.dup(2)]
    chatter = os.memfd_create("sage-import", os.MFD_CLOEXEC)
    os.dup2(chatter, 1)
    os.dup2(chatter, 2)
    glb, failed = None, None
    try:
        glb = cell.sage_globals()
    except BaseException:
        failed = traceback.format_exc()
    for f in (sys.stdout, sys.stderr):
        f.flush()
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
        sys.stderr.write(failed)
        sys.stderr.flush()
    os.close(chatter)
    return glb


def run_once(lang, shell):
    code = read_all(0).decode("utf-8", "replace")
    # The user's code gets an empty stdin, not the channel its code came on.
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    cell.prepare_dirs()
    return cell.run_code(lang, code, shell, quiet_sage_globals)
