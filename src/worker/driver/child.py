"""The job's child: a fork of the warm worker (zygote.py) that becomes one
job. Forked ahead of its job as a spare, it confines itself, reseeds,
joins the jobs' cgroup, waits for its go, pre-touches, then reads its job
from a private pipe (job.py hands it over), runs the code in the pristine
globals and leaves as `python3 file.py` would (exit_job). A session's
background job leaves through exit_job too (interp.py).

Everything here runs in the child, after the fork: the worker only forks
(zygote.Worker.fork_spare calls run). `w` is the worker, as the fork has
it."""
import os
import sys

from . import cell, confine, items, memory, namespaces, pari_stack, sage_tmp, tracebacks
from .channel import Channel

JOB_FRAME_MAX = 1 << 16  # the frame a spare gets on its job pipe
# A child's trace stamps (see job.run's trace): ready, got_job, code_start,
# CLOCK_MONOTONIC microseconds, little-endian int64 each.
CHILD_STAMPS = ("ready", "got_job", "code_start")
CHILD_STAMP_BYTES = 8 * len(CHILD_STAMPS)
# The byte that lets a spare go on from its set-up to its pre-touch: sent
# once the sandbox has been reset after the previous job (Worker._go).
GO = b"G"
# Run by each pre-forked child before its job (see pretouch), one cell at
# a time: the first goes the whole way a job's cell goes (preparse,
# compile, display), the Sage ones pay Sage's copy-on-write faults.
PRETOUCH = {
    "sage": ("1\n", "R.<x> = QQ[]\nprint(factor(x^4 - 1))\n", "print(2^10, 1/3 + 1/6, sqrt(2).n())\n"),
    "python": ("1\n",),
}


def us():
    """CLOCK_MONOTONIC in microseconds: the host's clock too (sb_now_us),
    so the host can place the worker's stamps on its own timeline."""
    import time
    return time.monotonic_ns() // 1000


def run(w, work, keep, close, pretouch_after=0.0, trace_w=-1):
    """Become the job: keep (job_r, out_w, err_w, disp_w) are the spare's
    ends of its pipes, close every other fd of the worker. Never returns."""
    # _signal, not signal: signal.signal turns the old handler (the
    # worker's lambda) into a Handlers enum member, fails, and formats the
    # error it then drops: ~45 copy-on-write faults in a new fork
    # (docs/WARM.md).
    import _signal
    job_r, out_w, err_w, disp_w = keep
    status = 1
    try:
        # Stops: user code writing frames into the protocol channel,
        # reading the next job's code or another job's output: none of
        # the worker's own fds remain.
        for fd in close:
            os.close(fd)
        _signal.set_wakeup_fd(-1)
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        # Its own session and process group, no controlling terminal
        # (the fresh sandbox's command is setsid'd too).
        os.setsid()
        confine.scope_signals_and_sockets()
        # Fresh seeds now, ahead of the go (getrandom(2) only, no file):
        # in a new fork they cost ~15 ms of copy-on-write faults, paid
        # before the job arrives (for a spare forked during a job back
        # to back, while that job still runs).
        reseed()
        # Into the jobs' cgroup now, while the previous job may still run:
        # the move may wait (v2: an RCU grace period, join_job_cgroup), which
        # a spare forked during a job back to back paid after its go, on
        # the next call's path (docs/WARM.md). Waiting, it uses
        # no CPU there; its pre-touch, after the go, runs when no job
        # does, and counts in the jobs' cgroup as the job's own work.
        cgroup_error = join_job_cgroup(w)
        if os.read(job_r, len(GO)) != GO:
            os._exit(0)  # dropped before its go
        if pretouch_after is not None:
            pretouch(w, job_r, pretouch_after)
        # What the job may add to is what it inherits (read here, before
        # the job: nothing allocates much between now and its code).
        data_bytes = memory.status_kib("VmData") * 1024
        stamps = [us()]
        try:
            jch = Channel(job_r, -1, max_in=JOB_FRAME_MAX)
            hdr, _ = jch.recv()
            code = jch.exact(int(hdr["code_bytes"]))
        except (EOFError, ValueError, KeyError, TypeError):
            os._exit(0)  # not needed after all
        stamps.append(us())
        os.close(job_r)
        if cgroup_error is not None:
            os.write(err_w, cgroup_error.encode())
            os._exit(125)  # SB_EXIT_SANDBOX: the sandbox failed, not the code
        # Until here it was undumpable like the worker: while it waits,
        # the job running before it cannot ptrace it or patch its
        # memory through /proc. Now it is an ordinary process.
        confine.set_dumpable(True)
        confine.prefer_oom_kill()  # (dumpable: its /proc files are its own again)
        lang = hdr["lang"]
        os.chdir(work)
        limits = dict(hdr.get("limits") or {})
        if w.one_job:
            # The sandbox's own limits are the job's (and Sage is still
            # to be imported here): no RLIMIT_DATA on top.
            limits.pop("memory_bytes", None)
        confine.apply_job_limits(limits, data_bytes)
        os.dup2(w.null, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (w.null, out_w, err_w):
            os.close(fd)
        code = code.decode("utf-8", "replace")
        if trace_w >= 0:
            # written and closed before the job's code runs
            import struct
            try:
                os.write(trace_w, struct.pack("<3q", *stamps, us()))
            except OSError:
                pass
            os.close(trace_w)
        # Besides fds 0-2, the job holds only its display pipe
        # (close-on-exec: no program it runs inherits it).
        items.begin(disp_w, hdr.get("display"))
        status = _run_job(w, lang, code, hdr.get("limits") or {})
    except BaseException:
        try:
            tracebacks.print_user_traceback()
        except BaseException:
            pass
    exit_job(status)


def pretouch(w, job_r, after):
    """Run typical small cells here, after the go and before the job,
    while fds 1 and 2 are still /dev/null: the copy-on-write faults and
    cold caches that every child of the worker would otherwise pay at
    the start of its job are paid while it waits. One cell at a time,
    and no more once the job is here (it pays the rest itself, no
    later than it would have). Not before `after` seconds have passed
    without a job: a job that comes while a cell runs waits for it."""
    import select
    if w.kind == "sage" and w.glb is None:
        return
    # Back to back the job is usually here already: then nothing else
    # (each line below touches pages of its own in a new fork).
    if select.select([job_r], [], [], after)[0]:
        return
    import builtins
    import linecache
    glb = w.glb if w.glb is not None else namespaces.python_globals()
    for i, src in enumerate(PRETOUCH[w.kind]):
        if i and select.select([job_r], [], [], 0)[0]:
            break
        try:
            # Its names go to a dict of its own: the job gets the
            # pristine namespace itself, not a copy (copying it would
            # write a reference count into every Sage object's page,
            # ~1,500 copy-on-write faults: docs/WARM.md).
            cell.run_cell(cell.sage_preparse(src) if w.glb is not None else src, glb, loc={})
        except BaseException:
            pass
    # as the worker left them (run_cell's display and traceback source)
    builtins.__dict__.pop("_", None)
    linecache.cache.pop(cell.CELL, None)
    for f in (sys.stdout, sys.stderr):
        f.flush()


def reseed():
    # Each child would otherwise repeat the worker's random numbers.
    if "sage.misc.randstate" in sys.modules:
        sys.modules["sage.misc.randstate"].set_random_seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()


def join_job_cgroup(w):
    """In the spare, before its go: into the jobs' cgroup. None, or why
    it could not (then the job must not run: never with the worker's
    larger share). On cgroup v1 the fd is the cgroup's `tasks`: "0" moves
    the writing thread, and the spare is one thread here (a fresh fork
    that has started none), so the move skips the kernel's global
    threadgroup lock, whose write side waited for an RCU grace period
    (~3-10 ms) and held up every fork and exit meanwhile (through
    `cgroup.procs` on v2 it still does). Either way it is paid while the
    spare waits for its go, not when its job has come."""
    if w.job_cgroup < 0:
        return None
    try:
        os.write(w.job_cgroup, b"0")  # "0": the writing thread (v1 tasks) or process
        os.close(w.job_cgroup)
    except OSError as e:
        return ("sagebox: the job was not run: its process could not join the cgroup that "
                "holds each job to the `cpus` limit (%s). Report this with the output of "
                "`sagebox status`.\n" % (e.strerror,))
    w.job_cgroup = -1
    return None


def import_over(w):
    """Tell the worker the Sage import is over (failed or not) or was
    never to be (a job in another language): from here on the job
    says what happens (job.import_died)."""
    if w.import_w >= 0:
        try:
            os.write(w.import_w, b".")
        except OSError:
            pass
        os.close(w.import_w)
        w.import_w = -1


def _run_job(w, lang, code, limits):
    if lang != "sage":
        import_over(w)
    def sage_glb():
        if w.import_error is not None:
            sys.stderr.write(w.import_error)
            return None
        if w.glb is not None:
            # The worker's pristine namespace, as this child's fork
            # has it: the job is the only one to run in it.
            pari_stack.fit(limits.get("memory_bytes"))
            return w.glb
        # One job (fresh): Sage is imported here, in the job's child,
        # and its import chatter is not the job's output.
        fresh = namespaces.sage_globals_quietly()
        import_over(w)
        if fresh is not None:
            # (not after a failed import: a half-imported randstate or
            # numpy.random, called with no memory left, may raise where
            # nothing says why)
            reseed()
            pari_stack.fit(limits.get("memory_bytes"))
        return fresh
    return cell.run_code(lang, code, w.shell, sage_glb)


def exit_job(status):
    """Leave as `python3 file.py` would: wait for non-daemon
    threads, run atexit handlers, flush. Then close the output and the
    display pipe before _exit, so the worker sees the end of the job at once
    (it reads the status from /proc while the kernel tears down the address
    space)."""
    import atexit
    # As the interpreter's own exit: threads to wait for only when the
    # job imported threading (the worker does not: zygote.run_worker).
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    sage_tmp.skip_unmade()
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass
    status = status & 0xff if isinstance(status, int) else 1
    items.close()
    for fd in (1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(status)

