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


def test_statuses_read_while_exiting_are_the_real_ones():
    """Real children with a large address space to tear down, polled as the
    worker polls them: whatever /proc says must be what waitpid says."""
    def job(code):
        def run():
            b = bytearray(32 << 20)  # pages to unmap at exit
            b[::4096] = b"x" * len(b[::4096])
            os._exit(code)
        return run

    for code in (1, 0, 3, 1, 7, 1):
        pid = child(job(code))
        early = None
        while early is None:
            early = procs.exiting_status(pid, tries=1)
            if early is None and os.waitpid(pid, os.WNOHANG)[0]:
                break  # reaped before /proc said anything: fine
        else:
            _, status = os.waitpid(pid, 0)
            assert early == status, (code, early, status)
            continue
        assert early is None


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
