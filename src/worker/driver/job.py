"""One job in the warm worker (zygote.py): its spare takes the job, the
code is spliced from the channel into the spare's pipe, and its output and
displayed items are relayed to the host until it ends, under its deadline, its
flood limits and the host's cancel; then whatever it left running dies
and the done frame goes out. The worker never holds the job's bytes."""
import os
import select
import time

from . import netrelay
from .channel import Channel, Malformed, discard, pending, _splice
from .child import CHILD_STAMPS, CHILD_STAMP_BYTES, us
from .procs import REAP_GRACE, exiting_status

CHUNK = 1 << 16         # the most bytes of output in one `out` frame
EXIT_GRACE_MS = 300     # pipes held open after the job's exit (as fresh);
                        # the host's exit_grace_ms overrides it
# A run frame that came within this long after the worker was ready for it
# counts as a call back to back (run forks the next spare meanwhile); a
# model thinks for seconds between calls.
BACK_TO_BACK_US = 20000


def run(w, hdr, payload):
    """One job, from its run frame to its done frame."""
    jid = hdr.get("id")
    lang = hdr.get("lang")
    k = hdr.get("code_bytes")
    # The code follows the frame as code_bytes raw bytes; a run frame that
    # carries bytes of its own is not one the host sends.
    if (not isinstance(jid, int) or lang not in ("sage", "python", "shell") or payload
            or not isinstance(k, int) or isinstance(k, bool) or k < 0):
        raise Malformed("bad run frame")
    timeout = max(int(hdr["timeout_ms"]), 1) / 1000.0
    max_output = int(hdr["max_output"])
    max_display = hdr.get("max_display_bytes")
    if not isinstance(max_display, int) or isinstance(max_display, bool):
        max_display = max_output
    grace = hdr.get("exit_grace_ms")
    exit_grace = (grace if isinstance(grace, int) and 0 <= grace <= 60000 else EXIT_GRACE_MS) / 1000.0
    # Statuses of the last job's processes are forgotten; a spare's is
    # kept, so that take_spare sees a spare that died (or was killed).
    spare_pids = {sp["pid"] for sp in w.spares}
    w.procs.reaped = {p: st for p, st in w.procs.reaped.items() if p in spare_pids}
    # Debug timing: CLOCK_MONOTONIC microseconds (see child.us), reported in
    # the done frame; the host prints them (SAGEBOX_WARM_TRACE).
    trace = None
    if hdr.get("trace") is True:
        w.trace = True
        trace = {"recv": us(), **w.between}
    sp = w.take_spare()
    if trace is not None:
        trace["spare_taken"] = us()
    pid = sp["pid"]
    w.job_work = sp["work"]
    start = time.monotonic()
    deadline = start + timeout
    _hand_over(w, sp, hdr, k)
    if trace is not None:
        trace["handed"] = us()
    w.ch.send({"type": "started", "id": jid})
    keep = [sp["pid"] for sp in w.spares] + ([w.janitor.pid] if w.janitor else []) + list(netrelay.pids())
    # The next job's child: when calls come back to back, forked now,
    # while this job runs (the fork's cost overlaps the job, on the
    # other CPU when there is one); it waits for its go until the
    # sandbox has been reset after this job, so nothing this job leaves
    # reaches it (it reads no file before its go). When calls are
    # spaced, it is forked after this job (serve), off every call's
    # path and not beside a job.
    if w.back_to_back and not w.spares and not w.warmups:
        t = us()
        try:
            # When the next call comes back to back too, it finds this
            # child waiting, not in the middle of a pre-touch cell (the
            # job then pays those faults itself, as the cell would have).
            w.spares.append(w.fork_spare(pretouch_after=BACK_TO_BACK_US / 1e6))
            keep.append(w.spares[-1]["pid"])
        except OSError:
            pass  # (this job holds the pids or memory: forked after it)
        if trace is not None:
            trace["spare_fork_in_job_us"] = us() - t
    status, timed_out, cancelled, flooded = _relay(w, jid, sp, keep, deadline, exit_grace,
                                                   max_output, max_display, trace)
    # Whatever the job started and left behind dies now, before the
    # result goes out: daemons, setsid'd grandchildren, stopped
    # processes. (The job's own process may still be tearing down its
    # copy of the worker's memory; it runs no code any more.)
    if trace is not None:
        trace["streams_closed"] = us()
    w.dirty = w.dirty or w.procs.sweep(keep, wait_for=lambda p: p != pid or status is None)
    if trace is not None:
        trace["swept"] = us()
        trace.update(_child_stamps(w, sp))
    if sp["trace_r"] >= 0:
        w.close(sp["trace_r"])
    if status is None:
        status = w.procs.reaped.pop(pid, None)
    if sp["import_r"] >= 0:
        if status is not None and not (timed_out or cancelled or flooded):
            _import_died(w, sp["import_r"], jid, status, hdr.get("limits"))
        w.close(sp["import_r"])
    exit_code, sig = -1, 0
    if status is None:
        w.dirty = w.dirty or "lost the exit status of a job"
    elif os.WIFEXITED(status):
        exit_code = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
    done = {"type": "done", "id": jid, "exit_code": exit_code, "signal": sig,
            "timed_out": timed_out, "cancelled": cancelled, "flooded": flooded}
    if trace is not None:
        trace["done"] = us()
        done["trace"] = trace
    w.ch.send(done)


def _relay(w, jid, sp, keep, deadline, exit_grace, max_output, max_display, trace):
    """The job's output, from its pipes to the host, until it has ended
    and its pipes are closed; its deadline, the flood limits and a cancel
    kill it (and whatever it started). Returns (status or None,
    timed_out, cancelled, flooded)."""
    pid = sp["pid"]
    streams = {sp["out_r"]: "stdout", sp["err_r"]: "stderr", sp["disp_r"]: "display"}
    limits = {sp["out_r"]: max_output, sp["err_r"]: max_output, sp["disp_r"]: max_display}
    totals = dict.fromkeys(streams, 0)
    status = None
    ended_at = killed_at = None
    timed_out = cancelled = flooded = False
    poller = select.poll()
    for fd in list(streams) + [w.ch.rfd, w.wake_r]:
        poller.register(fd, select.POLLIN)

    def kill():
        nonlocal killed_at
        if killed_at is None:
            killed_at = time.monotonic()
        w.dirty = w.dirty or w.procs.sweep(keep)

    while True:
        now = time.monotonic()
        if status is None and pid in w.procs.reaped:
            status = w.procs.reaped.pop(pid)
        if status is None and not streams:
            # Its output is closed: if it is exiting, the kernel
            # already knows the status; no need to wait until its copy
            # of the worker's address space is torn down.
            status = exiting_status(pid)
        if status is not None and ended_at is None:
            ended_at = now
            if trace is not None:
                trace["ended"] = us()
        if status is not None and not streams:
            break
        if killed_at is None and now >= deadline:
            timed_out = True
            kill()
            continue
        if ended_at is not None and streams and killed_at is None and now >= ended_at + exit_grace:
            kill()
            continue
        if killed_at is not None and now >= killed_at + REAP_GRACE:
            w.dirty = "processes of a job could not be killed"
            break
        if killed_at is not None:
            wake = killed_at + REAP_GRACE
        elif ended_at is not None:
            wake = ended_at + exit_grace
        else:
            wake = deadline
        for fd, ev in poller.poll(max(0, int((wake - now) * 1000)) + 1):
            if fd in streams:
                n = pending(fd)
                if n == 0:
                    if ev & (select.POLLHUP | select.POLLERR):  # the end of that stream
                        poller.unregister(fd)
                        del streams[fd]
                        w.close(fd)
                    continue
                n = min(n, CHUNK)
                if trace is not None and "first_out" not in trace:
                    trace["first_out"] = us()
                totals[fd] += n
                # The job's output goes from its pipe to the host
                # without passing through the worker's memory.
                w.ch.send_spliced({"type": "out", "id": jid, "stream": streams[fd]}, fd, n)
                if totals[fd] > limits[fd] and not flooded:
                    flooded = True
                    kill()
            elif fd == w.ch.rfd:
                try:
                    h, _ = w.ch.recv()
                except EOFError:
                    # The host sends nothing more (a fresh sandbox's
                    # host may close it after the job): the job goes on.
                    poller.unregister(fd)
                    continue
                if h.get("type") != "cancel":
                    raise Malformed("unexpected frame %r during a job" % (h.get("type"),))
                if h.get("id") == jid and not cancelled:
                    cancelled = True
                    kill()
            elif fd == w.wake_r:
                try:
                    os.read(w.wake_r, 4096)
                except BlockingIOError:
                    pass
                w.procs.reap()
    for fd in streams:
        w.close(fd)
    return status, timed_out, cancelled, flooded


def _hand_over(w, sp, hdr, k):
    """Give the waiting child its job: a small frame, then the k bytes of
    code, moved from the channel straight into the child's pipe, so that
    the worker never holds them."""
    left = k
    try:
        Channel(-1, sp["job_w"]).send({"lang": hdr["lang"], "limits": hdr.get("limits") or {},
                                      "display": hdr.get("display"), "code_bytes": k})
        while left > 0:
            n = _splice(w.ch.rfd, sp["job_w"], min(left, 1 << 20))
            if n == 0:
                raise EOFError("the host closed the channel")
            left -= n
    except BrokenPipeError:
        # the spare died (its wait status says how); the rest of the
        # code must still leave the channel, unread
        if left:
            discard(w.ch.rfd, left)
    w.close(sp["job_w"])


def _import_died(w, import_r, jid, status, limits):
    """A fresh sandbox's child that ended before its Sage import was
    over (no byte on its import pipe) never ran the job's code, and may
    have had no memory left to say why: under a tight memory limit
    Sage's import can fail in C code that crashes, or leaves Python
    unable to format the error. Say it for it."""
    try:
        os.set_blocking(import_r, False)
        if os.read(import_r, 1):
            return  # the import was over: the job said what happened
    except OSError:
        pass
    import signal
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:  # a real-time signal past SIGRTMIN has no name of its own
            name = signal.strsignal(sig) or "?"
        how = "was killed by signal %d (%s)" % (sig, name)
    else:
        how = "exited with status %d" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)
    mem = (limits or {}).get("memory_bytes")
    why = ("\nsagebox: the job's process %s while it imported Sage, before the job's code ran" % how)
    if isinstance(mem, int) and mem > 0:
        why += (", under a memory limit of %d MiB: most likely Sage ran out of memory as it started. "
                "Raise the memory limit (the memory setting).\n" % (mem >> 20))
    else:
        why += ".\n"
    w.ch.send({"type": "out", "id": jid, "stream": "stderr"}, why.encode())


def _child_stamps(w, sp):
    """The stamps the child wrote before its code ran (it closed the
    pipe then: the job itself never had it). Read into a fixed buffer
    that is wiped, as procs.stat_fields does."""
    import struct
    if sp["trace_r"] < 0:
        return {}
    buf = w.stamp_buf
    try:
        os.set_blocking(sp["trace_r"], False)
        n = os.readv(sp["trace_r"], [buf])
    except OSError:
        n = 0
    try:
        if n != CHILD_STAMP_BYTES:
            return {}
        return {"child_" + k: v for k, v in zip(CHILD_STAMPS, struct.unpack("<3q", buf))}
    finally:
        buf[:] = bytes(CHILD_STAMP_BYTES)
