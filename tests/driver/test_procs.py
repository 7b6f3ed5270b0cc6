"""procs: the exit status the worker reads from /proc/PID/stat while a
job's child is still tearing down (so that the result need not wait for a
copy of Sage to be unmapped). It must never be a status the kernel has not
stored yet: do_exit() sets PF_EXITING before it stores the exit code, and a
read in between gave 0, so a job that raised was reported as a success
(tests/warm/test_isolation.py, seen under load on a fresh machine)."""
import os
import signal

from driver import procs

# /proc/PID/stat as proc(5) numbers it, counted from the field after
# "(comm)" (field 3 is 0), and include/linux/sched.h.
FLAGS, VSIZE, EXIT_CODE = 9 - 3, 23 - 3, 52 - 3
PF_EXITING = 0x4


def child(fn):
    """A forked child running fn, which must not return."""
    pid = os.fork()
    if pid == 0:
        try:
            fn()
        finally:
            os._exit(99)
    return pid


def paused_child():
    return child(lambda: signal.pause())


def window_fields(pid):
    """The real fields of a live process as do_exit() shows them between
    exit_signals() and `tsk->exit_code = code`: PF_EXITING set, exit code
    still 0, the address space still attached."""
    f = list(procs.stat_fields(pid))
    assert int(f[VSIZE]) > 0 and len(f) > EXIT_CODE
    f[FLAGS] = str(int(f[FLAGS]) | PF_EXITING).encode()
    f[EXIT_CODE] = b"0"
    return f


def test_no_status_before_the_kernel_stored_it(monkeypatch):
    pid = paused_child()
    try:
        fields = window_fields(pid)
        monkeypatch.setattr(procs, "stat_fields", lambda p: fields)
        # The old reading returned 0 here: a failing job's success.
        assert procs.exiting_status(pid, tries=3) is None
        # Once the address space is detached (exit_mm, after the store),
        # the status is the kernel's.
        fields[VSIZE] = b"0"
        fields[EXIT_CODE] = str(1 << 8).encode()
        assert procs.exiting_status(pid, tries=1) == 1 << 8
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def watch(pid):
    """Poll an exiting child as the worker does: (what /proc said first,
    or None if it was reaped before /proc said anything; what waitpid
    says)."""
    while True:
        early = procs.exiting_status(pid, tries=1)
        if early is not None:
            return early, os.waitpid(pid, 0)[1]
        p, status = os.waitpid(pid, os.WNOHANG)
        if p:
            return None, status


def exits_with(code, big=False, undumpable=False):
    def run():
        if big:
            b = bytearray(32 << 20)  # pages to unmap at exit
            b[::4096] = b"x" * len(b[::4096])
        if undumpable:
            import ctypes
            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
        os._exit(code)
    return run


def test_statuses_read_while_exiting_are_the_real_ones():
    """Real children with a large address space to tear down: whatever
    /proc says must be what waitpid says."""
    for code in (1, 0, 3, 1, 7, 1):
        early, status = watch(child(exits_with(code, big=True)))
        assert status == code << 8 and early in (None, status), (code, early, status)


def test_a_job_that_made_itself_undumpable_is_not_read_as_a_success():
    """An unprivileged reader (the worker in a sandbox) of a non-dumpable
    child's /proc/PID/stat is shown exit code 0: every failure of such a
    job was reported as a success. The status must come from waitpid
    then. The reader here is a child that dropped root, if it had it."""
    r, w = os.pipe()
    reader = os.fork()
    if reader == 0:
        try:
            os.close(r)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)  # and with it every capability
            seen = [(code,) + watch(child(exits_with(code, undumpable=True))) for code in (1, 3, 1)]
            os.write(w, repr(seen).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        seen = eval(f.read() or "None")
    os.waitpid(reader, 0)
    assert seen, "the reader failed"
    for code, early, status in seen:
        assert status == code << 8 and early in (None, status), (code, early, status)


def test_is_exiting():
    pid = paused_child()
    try:
        assert procs.is_exiting(pid) is False
    finally:
        os.kill(pid, signal.SIGKILL)
    while not procs.is_exiting(pid):
        pass
    os.waitpid(pid, 0)
    assert procs.is_exiting(pid) is True  # gone
