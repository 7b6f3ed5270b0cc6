"""What a warm worker and its jobs' children apply to themselves: prctl
flags, a nested Landlock scope, rlimits, the OOM preference. The sandbox's
own confinement (namespaces, seccomp, the outer Landlock domain, cgroups)
is the backend's; this is only what separates one job from the worker and
from the next job."""
import os

# prctl(2) options (linux/prctl.h).
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36

# Landlock (linux/landlock.h). The syscall numbers are the same on every
# architecture (they were allocated after the syscall tables were unified).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0   # flag: return the ABI version
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
LANDLOCK_SCOPE_SIGNAL = 1 << 1
LANDLOCK_ABI_SCOPES = 6                     # the first ABI with `scoped`
# struct landlock_ruleset_attr: handled_access_fs, handled_access_net,
# scoped; three __u64.
RULESET_ATTR_FIELDS = 3

# /proc/self/oom_score_adj: the OOM killer's first choice.
OOM_SCORE_ADJ_MAX = 1000

_libc = None


def libc():
    global _libc
    if _libc is None:
        import ctypes
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def set_dumpable(on):
    """Stops (when off): a process of the sandbox opening our fds through
    /proc/PID/fd/N, or reading and patching us through /proc/PID/mem. An
    undumpable process's /proc files belong to root and need
    CAP_SYS_PTRACE, which nothing in the sandbox has. A fork inherits it."""
    import ctypes
    if libc().prctl(PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, %d)" % on)


def become_subreaper():
    """Orphans of a job (double-forked, setsid'd) become our children: we
    reap them and can tell when they are gone."""
    libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def landlock_abi():
    """The kernel's Landlock ABI version; <= 0 without Landlock."""
    import ctypes
    return libc().syscall(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                          ctypes.c_uint(LANDLOCK_CREATE_RULESET_VERSION))


_scope_calls = None


def prepare_scope():
    """The Landlock scope's two system calls with their arguments, made
    once, in the worker before it forks (scope_signals_and_sockets runs in
    every new fork: there the ABI probe and the ctypes objects cost ~45
    copy-on-write faults, where calling the prepared ones costs a few);
    False where the kernel has no scopes."""
    global _scope_calls
    if _scope_calls is None:
        import ctypes
        if landlock_abi() < LANDLOCK_ABI_SCOPES:
            _scope_calls = False
        else:
            attr = (ctypes.c_uint64 * RULESET_ATTR_FIELDS)(
                0, 0, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)
            create = (ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr),
                      ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint(0))
            _scope_calls = (libc().syscall, create, ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF),
                            ctypes.c_int, ctypes.c_uint(0))
    return _scope_calls


def scope_signals_and_sockets():
    """Stops: a job signalling (killing, stopping) its worker, the janitor
    or a spare, and connecting to their abstract unix sockets. A nested
    Landlock domain scoped for both lets the job reach only its own
    processes. Best effort: older kernels and Landlock-less backends rely on
    the host restarting a worker that died. Returns whether it applied."""
    calls = prepare_scope()
    if not calls:
        return False
    sc, create, restrict_self, c_int, no_flags = calls
    fd = sc(*create)
    if fd < 0:
        return False
    try:
        return sc(restrict_self, c_int(fd), no_flags) == 0
    finally:
        os.close(fd)


# Landlock's filesystem rights that make something other than a regular
# file or directory (linux/landlock.h: MAKE_CHAR, MAKE_SOCK, MAKE_FIFO,
# MAKE_BLOCK, MAKE_SYM), and its path rule.
LANDLOCK_MAKE_SPECIAL = (1 << 6) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
LANDLOCK_RULE_PATH_BENEATH = 1
SYS_LANDLOCK_ADD_RULE = 445
# Where the code may still make them with a project folder bound (its
# scratch space; the workspace and the project folder are not).
SPECIAL_OK = ("/tmp", "/dev/shm")


def project_bound(workspace="/work", project="/work/project"):
    """Whether the user's project folder is bound (a filesystem of its own
    at /work/project: a directory the code made there is not)."""
    try:
        return os.stat(project).st_dev != os.stat(workspace).st_dev
    except OSError:
        return False


def no_links_in_project():
    """Stops: a symlink, FIFO, socket or device node left in the user's
    project folder, on the host's disk, where the user's own programs would
    follow or open it. A nested Landlock domain handles those rights and
    grants them only in SPECIAL_OK, so neither /work nor /work/project (which
    lies beneath it) takes one. Every backend: the native one's outer domain
    says the same; in a container this is what says it. Returns whether it
    applied (False without Landlock)."""
    import ctypes
    if landlock_abi() < 1:
        return False
    attr = (ctypes.c_uint64 * 1)(LANDLOCK_MAKE_SPECIAL)
    sc = libc().syscall
    fd = sc(ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint(0))
    if fd < 0:
        return False

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
    try:
        for path in SPECIAL_OK:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = PathBeneath(LANDLOCK_MAKE_SPECIAL, pfd)
                if sc(ctypes.c_long(SYS_LANDLOCK_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                      ctypes.byref(rule), ctypes.c_uint(0)) != 0:
                    return False
            finally:
                os.close(pfd)
        return sc(ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(fd), ctypes.c_uint(0)) == 0
    finally:
        os.close(fd)


def prefer_oom_kill():
    """The OOM killer takes a job, not the worker it came from. Only once
    the process is dumpable again (set_dumpable): an undumpable process's
    /proc/self files belong to root, and the write fails with EACCES (it
    did so, unnoticed, in every job, when written earlier). Bytes through os.open:
    no text layer to set up in a new fork."""
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.write(fd, b"%d" % OOM_SCORE_ADJ_MAX)
    except OSError:
        pass
    finally:
        os.close(fd)


def apply_job_limits(limits, inherited_data_bytes):
    """The job's rlimits, lowered from the worker's. The job may add
    `memory_bytes` of private data to what it inherited from the worker
    (inherited_data_bytes: our VmData); the sandbox's cgroup (or the
    worker's own RLIMIT_DATA) bounds the sum."""
    import resource

    def lower(res, value):
        soft, hard = resource.getrlimit(res)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(res, (value, value))
    if limits.get("memory_bytes"):
        lower(resource.RLIMIT_DATA, inherited_data_bytes + int(limits["memory_bytes"]))
    if limits.get("nofile"):
        lower(resource.RLIMIT_NOFILE, int(limits["nofile"]))
    if limits.get("fsize_bytes"):
        lower(resource.RLIMIT_FSIZE, int(limits["fsize_bytes"]))
    lower(resource.RLIMIT_CORE, 0)
