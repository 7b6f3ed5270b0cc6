"""A session's interpreter: the process that runs a session's code and
keeps its state between calls (session.py, the controller, starts it and
never runs user code itself).

  Sage / Python   a fork of the controller (which imported Sage once): it
                  reads requests on a private pipe and runs each call's code
                  in its one globals dict (Sage preparse and last-expression
                  display as in stateless calls, cell.py). A background job
                  is a fork of it (so the job sees the session's variables;
                  its changes do not flow back).
  shell           a persistent bash reading commands on a pipe: each call's
                  script is sourced by a small wrapper function, so `cd`,
                  `export`, variables and functions persist. A job is a
                  subshell (a fork of the session's bash).

Both report to the controller in lines on a status pipe, which the
controller parses as untrusted (the session's own code can write there):
  done STATUS            the call ended with this exit status
  job ID PID [WAITER]    job ID runs as process PID. A Python job is
                         reparented to the controller, a subreaper, which
                         reaps it. A shell job stays the child of a
                         subshell, WAITER (which then execs a Python reaper,
                         the job's subreaper), which waits for it and reports
  ended ID PID STATUS    its status as the shell gives it ($?: 128+N when
                         signal N ended it). (Were that subshell to exit
                         first, a job that ended at once would be reaped by
                         bash and its status lost.) WAITER itself is
                         double-forked, reparented to the controller: the
                         session's `wait` and `$!` never see it. It ignores
                         SIGINT, which an interrupt sends to its group.
The interpreter is in a session (setsid) and process group of its own: an
interrupt is SIGINT to that group (KeyboardInterrupt, as Jupyter and
SageMathCell do), a hard stop SIGKILL to it and to every process of its
session. A Landlock scope keeps it (and so every job) from signalling the
controller where the kernel has scopes."""
import os
import shlex
import signal
import sys

from . import cell, confine, interact, items, memory, pari_stack, state
from .child import exit_job
from .channel import Channel

# The status pipe's fd inside the session's bash (a high number a script is
# unlikely to use; a script that closes it only breaks its own session, which
# is then restarted).
SHELL_STATUS_FD = 77
# The largest request frame the interpreter reads (a run frame without code).
REQ_MAX = 1 << 16

# The bash side. Every builtin is called through `builtin` (a session may
# define functions named trap or printf). An interrupt returns from the
# sourced script and from every function it called: after SIGINT the trap
# sets extdebug and a DEBUG trap that makes each later command `return`,
# until the wrapper is reached again.
SHELL_INIT = r'''
__sb_stop() { [[ -n $__sb_intr && ${#FUNCNAME[@]} -gt 1 && ${FUNCNAME[1]} != __sb_run ]] && return 2; return 0; }
__sb_int() { __sb_intr=1; builtin shopt -s extdebug; builtin set -T; builtin trap __sb_stop DEBUG; }
__sb_run() {
  builtin trap '__sb_int; return 130' INT
  builtin source "$1" </dev/null
  builtin local __sb_st=$?
  builtin trap - INT DEBUG; builtin set +T; builtin shopt -u extdebug
  [[ -n $__sb_intr ]] && __sb_st=130; __sb_intr=
  builtin printf 'done %d\n' "$__sb_st" >&FD
}
__sb_job() {
  ( ( builtin trap '' INT; builtin set -m
      ( builtin trap - INT; builtin unset -f exec; builtin read -r __sb_go <"$5"; builtin unset __sb_go
        exec >"$3" 2>"$4" </dev/null; builtin source "$2" ) &
      builtin set +m; __sb_p=$!
      builtin printf 'job %s %d %d\n' "$1" "$__sb_p" "$BASHPID" >&FD
      builtin exec PYTHON -I -S -c 'REAPER' "$1" "$__sb_p" "$5" </dev/null >/dev/null 2>&1 ) & )
}
builtin printf 'ready %s\n' "${BASH_VERSION:-none}" >&FD
'''
# A shell job's waiter, once it has forked the job: it becomes the job's
# subreaper (bash cannot), then lets the job start (the job waits on the
# fifo argv[3] until then: nothing it forks can be orphaned before), reports
# the job's status as bash's $? would, and reaps what the job detached
# (setsid, a double fork) until none is left. Those stay below it for
# job_cancel and session_reset to find (background.kill): a shell job's
# setsid'ed double-forked grandchild outlived job_cancel.
# (No single quote in it: it is quoted so in SHELL_INIT.)
SHELL_JOB_REAPER = """
import ctypes, os, sys
jid, pid = sys.argv[1], int(sys.argv[2])
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
finally:
    go = os.open(sys.argv[3], os.O_RDWR)  # (held until the job ends: it may open it late)
    os.write(go, b"go\\n")
try:
    st = os.waitpid(pid, 0)[1]
    st = 128 + os.WTERMSIG(st) if os.WIFSIGNALED(st) else os.WEXITSTATUS(st)
    os.write(FD, b"ended %s %d %d\\n" % (jid.encode(), pid, st))
except ChildProcessError:
    pass
os.close(FD)
os.close(go)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
    except InterruptedError:
        pass
"""
SHELL_INIT = (SHELL_INIT.replace("REAPER", SHELL_JOB_REAPER).replace("PYTHON", shlex.quote(sys.executable or "python3"))
              .replace("FD", str(SHELL_STATUS_FD)))


def _pipes(n):
    return [os.pipe2(os.O_CLOEXEC) for _ in range(n)]


class Interp:
    """The controller's handle on a running interpreter."""
    pid = -1
    ctl_w = st_r = out_r = err_r = disp_r = -1

    def fds(self):
        return [fd for fd in (self.ctl_w, self.st_r, self.out_r, self.err_r, self.disp_r) if fd >= 0]

    def close(self):
        for name in ("ctl_w", "st_r", "out_r", "err_r", "disp_r"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def interrupt(self):
        """SIGINT to its process group, as a terminal's Ctrl-C."""
        try:
            os.killpg(self.pid, signal.SIGINT)
        except (ProcessLookupError, PermissionError):
            pass

    def _spawn(self, child, display=False):
        """Fork; the child gets fds 0-2 from child(), the status pipe, the
        display pipe's write end when display (items.py), and nothing else
        of the controller's."""
        (ctl_r, ctl_w), (st_r, st_w), (out_r, out_w), (err_r, err_w) = _pipes(4)
        disp_r, disp_w = _pipes(1)[0] if display else (-1, -1)
        for f in (sys.stdout, sys.stderr):
            f.flush()
        pid = os.fork()
        if pid == 0:
            try:
                child(ctl_r, st_w, out_w, err_w, *([disp_w] if display else []))
            finally:
                os._exit(127)
        for fd in (ctl_r, st_w, out_w, err_w, disp_w):
            if fd >= 0:
                os.close(fd)
        for fd in (st_r, out_r, err_r, disp_r):
            if fd >= 0:
                os.set_blocking(fd, False)
        self.pid, self.ctl_w, self.st_r, self.out_r, self.err_r = pid, ctl_w, st_r, out_r, err_r
        self.disp_r = disp_r


def confine_child(workspace, limits, keep):
    """What every interpreter applies to itself: no fd of the controller's
    but keep; signals as a fresh process has them; its own session; the
    OOM killer's first choice; a Landlock scope so that it (and every job
    forked from it) cannot signal the controller; the job limits."""
    for fd in os.listdir("/proc/self/fd"):
        fd = int(fd)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    signal.set_wakeup_fd(-1)
    for s in (signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.setsid()
    confine.scope_signals_and_sockets()
    if confine.project_bound(workspace):
        confine.no_links_in_project()
    # (the controller is undumpable; the session's own code may read its
    # own /proc files as usual)
    confine.set_dumpable(True)
    confine.prefer_oom_kill()  # (dumpable: its /proc files are its own again)
    os.chdir(workspace)
    confine.apply_job_limits(limits, memory.status_kib("VmData") * 1024)
    pari_stack.fit(limits.get("memory_bytes"))


def outlive_sigterm():
    """The interpreter holds the session's variables, which sagebox saves
    when it stops. A reboot, a logout or `systemctl stop` sends SIGTERM to
    every process of the unit at once, this one too: ignoring it leaves the
    interpreter alive for sagebox's save (sagebox then ends it with
    SIGKILL). A handler, not SIG_IGN, so that programs the code runs start
    with SIGTERM as usual (exec resets handlers), and forks of it (jobs,
    multiprocessing) get the default back."""
    signal.signal(signal.SIGTERM, lambda *_: None)
    os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))


def _stdio(null, out_w, err_w):
    os.dup2(null, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)


class PyInterp(Interp):
    """A Sage or Python interpreter: a fork of the controller."""

    def __init__(self, lang, glb, workspace, limits, pristine=None):
        self.lang, self.glb, self.workspace, self.limits = lang, glb, workspace, limits
        self.pristine = pristine  # what the session had at its start (state.py saves the rest)

    def start(self):
        self._spawn(self._child, display=True)

    def send(self, hdr, code):
        """A request and its code (blocking: an idle interpreter reads at once)."""
        ch = Channel(-1, self.ctl_w)
        ch.send(dict(hdr, code_bytes=len(code)))
        ch._write(code)

    # -- the child
    def _child(self, ctl_r, st_w, out_w, err_w, disp_w):
        null = os.open("/dev/null", os.O_RDWR)
        confine_child(self.workspace, self.limits, [ctl_r, st_w, out_w, err_w, null, disp_w])
        outlive_sigterm()
        _stdio(null, out_w, err_w)
        for fd in (out_w, err_w):
            os.close(fd)
        cell.set_job_argv()
        for f in (sys.stdout, sys.stderr):
            f.reconfigure(line_buffering=True)  # job_output and progress see lines as they come
        interact.keep()  # its interacts stay for interact_update
        Loop(self, Channel(ctl_r, -1, max_in=REQ_MAX), st_w, null, disp_w).serve()
        os._exit(0)


class Loop:
    """The interpreter's own loop (in the child)."""

    def __init__(self, it, ch, st_w, null, disp_w):
        self.it, self.ch, self.st_w, self.null, self.disp_w = it, ch, st_w, null, disp_w
        self.calls = 0

    def report(self, line):
        # A late interrupt must not lose the line the controller waits for.
        while True:
            try:
                os.write(self.st_w, line.encode())
                return
            except KeyboardInterrupt:
                continue

    def serve(self):
        while True:
            try:
                hdr, _ = self.ch.recv()
                code = self.ch.exact(int(hdr["code_bytes"])).decode("utf-8", "replace")
            except KeyboardInterrupt:
                continue  # an interrupt that came after its call ended
            except (EOFError, ValueError, KeyError, TypeError):
                return
            op = hdr.get("op")
            if op == "run":
                self.calls += 1
                # What the call displays goes to the controller on the
                # display pipe, each figure saved in the workspace too
                # (items.py, figures.py).
                items.begin(self.disp_w, hdr.get("display"), save_dir=self.it.workspace, keep_fd=True)
                try:
                    iid = hdr.get("interact")
                    if isinstance(iid, str):
                        # an interact run again with a viewer's values (the code is their JSON)
                        status = interact.update(iid, code, self.it.glb)
                    else:
                        status = cell.run_source(hdr.get("lang"), code, self.it.glb, "<cell %d>" % self.calls)
                except KeyboardInterrupt:
                    status = 1
                finally:
                    items.end()
                flush()
                self.report("done %d\n" % (status & 0xff))
            elif op in ("save", "restore"):
                # The session's variables into or out of its workspace
                # (state.py), as a call: interrupted and restarted the same way.
                try:
                    status = state.run(op, self.it.glb, self.it.pristine, self.it.lang, self.it.workspace,
                                       hdr.get("report"))
                except KeyboardInterrupt:
                    status = 1
                flush()
                self.report("done %d\n" % (status & 0xff))
            elif op == "job":
                self.fork_job(hdr, code)

    def fork_job(self, hdr, code):
        """A background job: a fork of this interpreter (it sees the
        session's globals as they are now), double-forked so that it is
        reparented to the controller, which reaps it."""
        flush()
        jid = int(hdr["id"])
        try:
            a = os.fork()
        except OSError:
            self.report("nojob %d\n" % jid)
            return
        if a:
            # a reports the job's pid. A job_cancel that came before it did
            # kills it (background.kill: it is in the job's cgroup): the
            # controller would wait for the report for ever.
            if os.waitpid(a, 0)[1] != 0:
                self.report("nojob %d\n" % jid)
            return
        try:
            b = os.fork()
        except BaseException:
            os._exit(1)
        if b:
            os.write(self.st_w, b"job %d %d\n" % (jid, b))
            os._exit(0)
        status = 1
        try:
            os.setsid()
            # What the job detaches stays below it, for job_cancel and
            # session_reset to find (session.kill_job, kill_detached).
            confine.become_subreaper()
            os.close(self.st_w)
            os.close(self.ch.rfd)
            os.close(self.disp_w)  # a job's displayed items belong to no call
            out = os.open(hdr["out"], os.O_WRONLY | os.O_CLOEXEC)
            err = os.open(hdr["err"], os.O_WRONLY | os.O_CLOEXEC)
            _stdio(self.null, out, err)
            status = cell.run_source(hdr.get("lang"), code, self.it.glb, "<cell job>")
        except BaseException:
            pass
        exit_job(status)


def flush():
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except BaseException:
            pass


class ShellInterp(Interp):
    """A persistent bash: the session's shell state lives in it."""

    def __init__(self, shell, workspace, limits, env):
        self.shell, self.workspace, self.limits, self.env = shell, workspace, limits, env

    def start(self):
        self._spawn(self._child)
        os.write(self.ctl_w, SHELL_INIT.encode())

    def run(self, script_path):
        os.write(self.ctl_w, b"__sb_run %s\n" % quote(script_path))

    def job(self, jid, script_path, out_path, err_path, go_path):
        os.write(self.ctl_w, b"__sb_job %d %s %s %s %s\n" % (jid, quote(script_path), quote(out_path),
                                                           quote(err_path), quote(go_path)))

    def _child(self, ctl_r, st_w, out_w, err_w):
        confine_child(self.workspace, self.limits, [ctl_r, st_w, out_w, err_w])
        os.dup2(ctl_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(st_w, SHELL_STATUS_FD)
        os.set_inheritable(SHELL_STATUS_FD, True)
        for fd in (ctl_r, st_w, out_w, err_w):
            os.close(fd)
        cell.exec_shell([self.shell, "--noprofile", "--norc"], self.env)


def quote(path):
    """A path for a bash command line (the controller's own paths: no
    quote characters in them, but quote anyway)."""
    return b"'" + path.encode().replace(b"'", b"'\\''") + b"'"
