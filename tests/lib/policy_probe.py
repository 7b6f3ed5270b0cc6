"""The syscall policy, checked from inside a sandbox.

`sagebox policy --json` is the table every isolating backend compiles (native
to libseccomp, podman/docker to an OCI profile). `probe_code(policy)` is a
Python program that makes each refused call (and the allowed neighbours of
the conditional rows) in a forked child and prints what it got, as JSON;
`expected(policy)` is what the table says it must get. A test runs the probe
in a backend and compares: a backend that drifts from the table fails.

The probe runs only under a seccomp filter (it checks). Even so, no attempt
may change anything outside a throw-away child if the filter let it through:
no NULL path to acct, no valid length to sethostname, bad flags to kexec.
The arguments are chosen so that the kernel itself, without the filter, would
mostly answer something else than the table's errno (success, EBADF, EFAULT,
EINVAL): then the answer tells the filter's refusal from the kernel's. Every
name of the table needs an entry in ARGS, or the test fails, so a new row
cannot go unprobed.
"""
import json
import subprocess

AT_FDCWD = -100
NONEXISTENT_PID = 1 << 30

# name -> arguments for the attempt (ints; bytes become C strings; "pid" is
# the prober's own pid). Where a call succeeds without the filter it must be
# harmless in a throw-away child.
ARGS = {
    "unshare": [0x10000000],
    "setns": [-1, 0],
    "mount": [0, 0, 0, 0, 0],
    "umount2": [0, 0],
    "umount": [0],
    "pivot_root": [0, 0],
    "chroot": [0],
    "move_mount": [-1, 0, -1, 0, 0],
    "open_tree": [AT_FDCWD, b"/", 0],
    "open_tree_attr": [AT_FDCWD, b"/", 0, 0, 0],
    "fsopen": [b"tmpfs", 0],
    "fsmount": [-1, 0, 0],
    "fsconfig": [-1, 0, 0, 0, 0],
    "fspick": [-1, b"", 0],
    "mount_setattr": [-1, b"", 0, 0, 0],
    "keyctl": [0, -1, 0],
    "add_key": [0, 0, 0, 0, 0],
    "request_key": [0, 0, 0, 0],
    "bpf": [-1, 0, 0],
    "perf_event_open": [0, 0, -1, -1, 0],
    "ptrace": [0x4206, NONEXISTENT_PID, 0, 0],
    "process_vm_readv": ["pid", 0, 0, 0, 0, 0],
    "process_vm_writev": ["pid", 0, 0, 0, 0, 0],
    "kcmp": ["pid", "pid", 0, 0, 0],
    "pidfd_getfd": [-1, 0, 0],
    "io_uring_setup": [0, 0],
    "io_uring_enter": [-1, 0, 0, 0, 0, 0],
    "io_uring_register": [-1, 0, 0, 0],
    "userfaultfd": [1],
    "io_setup": [0, 0],                            # no events, no pointer: EINVAL/EFAULT for the kernel
    "kexec_load": [0, 0, 0, 0xFFFFFFFF],          # bad flags: EINVAL even for root
    "kexec_file_load": [-1, -1, 0, 0, 0xFFFFFFFF],
    "init_module": [0, 0, 0],
    "finit_module": [-1, 0, 0],
    "delete_module": [0, 0],
    "acct": [b"/nonexistent/acct"],                # never NULL: that turns accounting off
    "swapon": [0, 0],
    "swapoff": [0],
    "reboot": [0, 0, 0, 0],
    "syslog": [10, 0, 0],
    "quotactl": [0, 0, 0, 0],
    "quotactl_fd": [-1, 0, 0, 0],
    "vhangup": [],
    "lookup_dcookie": [0, 0, 0],
    "nfsservctl": [0, 0, 0],
    "uselib": [0],
    "iopl": [0],
    "ioperm": [0, 0, 0],
    "settimeofday": [0, 0],
    "clock_settime": [0, 0],
    "clock_adjtime": [0, 0],
    "adjtimex": [0],
    "sethostname": [0, -1],                        # never a valid length: not even root
    "setdomainname": [0, -1],                      # could blank the name
    "open_by_handle_at": [-1, 0, 0],
    "name_to_handle_at": [AT_FDCWD, b"/", 0, 0, 0],
    "fanotify_init": [0x200, 0],
    "inotify_init": [],
    "inotify_init1": [0],
    "mq_open": [0, 0, 0, 0],
    "mq_unlink": [0],
    "mq_timedsend": [-1, 0, 0, 0, 0],
    "mq_timedreceive": [-1, 0, 0, 0, 0],
    "mq_notify": [-1, 0],
    "mq_getsetattr": [-1, 0, 0],
    "clone3": [0, 0],
    "openat2": [AT_FDCWD, b"/", 0, 0],             # no open_how: EFAULT for the kernel
    "fchmodat2": [AT_FDCWD, b"/nonexistent", 0o755, 0xFFFF],  # bad flags: EINVAL
}

# Conditional rows: name (or, for a guarded row, "name where argN == V") ->
# label -> (args, refused?). The allowed cases show the rule did not take
# more than the table says.
SIGCHLD = 17
TIOCSTI, TIOCLINUX, FIONREAD = 0x5412, 0x541C, 0x541B
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
STREAM, DGRAM, RAW, SEQPACKET = 1, 2, 3, 5
# Families the kernel here would give a socket of (vsock with /dev/vsock,
# AF_ALG, netlink's other protocols): the filter's errno is then the
# filter's, not the kernel's. The others are refused all the same.
FAMILIES = {"AF_UNSPEC": 0, "AF_AX25": 3, "AF_IPX": 4, "AF_KEY": 15, "AF_PACKET": 17, "AF_RDS": 21,
            "AF_CAN": 29, "AF_TIPC": 30, "AF_BLUETOOTH": 31, "AF_ALG": 38, "AF_VSOCK": 40, "AF_XDP": 44,
            "AF_MCTP": 45, "46 (AF_MAX)": 46}
FAMILY_TYPE = {"AF_ALG": SEQPACKET, "AF_PACKET": DGRAM, "AF_KEY": RAW, "AF_TIPC": RAW, "AF_RDS": SEQPACKET,
               "AF_CAN": RAW, "AF_BLUETOOTH": RAW, "AF_XDP": RAW}
NETLINK = {"NETLINK_SOCK_DIAG": 4, "NETLINK_AUDIT": 9, "NETLINK_NETFILTER": 12, "NETLINK_KOBJECT_UEVENT": 15,
           "NETLINK_GENERIC": 16, "NETLINK_XFRM": 6, "32 (MAX_LINKS)": 32}
CONDITIONAL = {
    "socket": {f"socket:{name}": ([nr, FAMILY_TYPE.get(name, STREAM), 0], True) for name, nr in FAMILIES.items()}
    | {"socket:AF_UNIX with high bits": ([(1 << 32) | AF_UNIX, STREAM, 0], True),
       "socket:AF_VSOCK with high bits": ([(1 << 32) | 40, STREAM, 0], True),
       "socket:AF_UNIX": ([AF_UNIX, STREAM, 0], False),
       "socket:AF_INET": ([AF_INET, STREAM, 0], False),
       "socket:AF_INET6": ([AF_INET6, DGRAM, 0], False),
       "socket:AF_NETLINK": ([AF_NETLINK, RAW, 0], False)},
    f"socket where arg0 == {AF_NETLINK}":
        {f"socket:netlink {name}": ([AF_NETLINK, RAW, nr], True) for name, nr in NETLINK.items()}
    | {"socket:NETLINK_ROUTE with high bits": ([AF_NETLINK, RAW, 1 << 32], True),
       "socket:NETLINK_ROUTE": ([AF_NETLINK, DGRAM, 0], False)},
    "socketpair": {"socketpair:AF_VSOCK": ([40, STREAM, 0, "fdpair"], True),
                   "socketpair:AF_ALG": ([38, SEQPACKET, 0, "fdpair"], True),
                   "socketpair:AF_UNIX": ([AF_UNIX, STREAM, 0, "fdpair"], False)},
    "clone": {f"clone:{hex(f)}": ([f | SIGCHLD, 0, 0, 0, 0], True)
              for f in (0x10000000, 0x20000, 0x20000000, 0x40000000, 0x08000000, 0x04000000, 0x02000000)}
    | {"clone:plain fork": ([SIGCHLD, 0, 0, 0, 0], False)},
    "ioctl": {"ioctl:TIOCSTI": (["pipe", TIOCSTI, 0], True),
              "ioctl:TIOCSTI with high bits": (["pipe", (0xFFFFFFFF << 32) | TIOCSTI, 0], True),
              "ioctl:TIOCLINUX": (["pipe", TIOCLINUX, 0], True),
              "ioctl:FIONREAD": (["pipe", FIONREAD, "intbuf"], False)},
    # modes with the setuid or setgid bit: a file of the probe's own, or a
    # new name in its /tmp ("newpath", a fresh one each attempt)
    "chmod": {"chmod:setuid": (["tmpfile", 0o4755], True), "chmod:setgid": (["tmpfile", 0o2755], True),
              "chmod:plain": (["tmpfile", 0o600], False)},
    "fchmod": {"fchmod:setuid": (["tmpfd", 0o4755], True), "fchmod:setgid": (["tmpfd", 0o2700], True),
               "fchmod:plain": (["tmpfd", 0o644], False)},
    "fchmodat": {"fchmodat:setuid": ([AT_FDCWD, "tmpfile", 0o4755, 0], True),
                 "fchmodat:plain": ([AT_FDCWD, "tmpfile", 0o600, 0], False)},
    "creat": {"creat:setuid": (["newpath", 0o4755], True), "creat:plain": (["newpath", 0o644], False)},
    "open": {"open:create setgid": (["newpath", 0o101, 0o2755], True),
             "open:read": (["tmpfile", 0, 0], False)},
    "openat": {"openat:create setuid": ([AT_FDCWD, "newpath", 0o101, 0o4755], True),
               "openat:read": ([AT_FDCWD, "tmpfile", 0, 0], False)},
    "mknod": {"mknod:setuid file": (["newpath", 0o104755, 0], True),
              "mknod:fifo": (["newpath", 0o10644, 0], False)},
    "mknodat": {"mknodat:setgid file": ([AT_FDCWD, "newpath", 0o102755, 0], True),
                "mknodat:fifo": ([AT_FDCWD, "newpath", 0o10644, 0], False)},
    "personality": {"personality:READ_IMPLIES_EXEC": ([0x0400000], True),
                    "personality:MMAP_PAGE_ZERO": ([0x0100000], True),
                    "personality:high bits": ([0x100000000], True),
                    "personality:query": ([0xFFFFFFFF], False),
                    "personality:PER_LINUX32": ([0x8], False)},
}

PROBE = r'''
import ctypes, errno, json, os, sys
PROBES = json.loads(PROBES_JSON)
# Refuse to run unconfined: the attempts are meant for a sandbox, where the
# filter answers first and nothing outside can change.
if "Seccomp:\t2" not in open("/proc/self/status").read():
    print(json.dumps({"error": "not under a seccomp filter: refusing to probe"}))
    sys.exit(3)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
rfd, wfd = os.pipe()
intbuf = ctypes.c_int(0)
import itertools, tempfile
TMPFD, TMPFILE = tempfile.mkstemp(prefix="sb-probe-")
NEW = itertools.count()
fdpair = (ctypes.c_int * 2)()

def arg(a):
    if isinstance(a, str):
        if a == "pid":
            return ctypes.c_long(os.getpid())
        if a == "pipe":
            return ctypes.c_long(rfd)
        if a == "intbuf":
            return ctypes.byref(intbuf)
        if a == "tmpfile":
            return ctypes.c_char_p(TMPFILE.encode())
        if a == "tmpfd":
            return ctypes.c_long(TMPFD)
        if a == "newpath":
            # (each attempt is a child of its own: its pid makes the name new)
            return ctypes.c_char_p(("%s.%d.%d" % (TMPFILE, os.getpid(), next(NEW))).encode())
        if a == "fdpair":
            return fdpair
        return ctypes.c_char_p(a.encode())
    if isinstance(a, list):  # bytes, sent as a list of ints
        return ctypes.c_char_p(bytes(a))
    return ctypes.c_long(a if a < (1 << 63) else a - (1 << 64))

def attempt(nr, args):
    """The call in a forked child: its effects (a namespace, a child of its
    own) end with it. Returns 'ok', an errno name, or 'signal N'."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        ctypes.set_errno(0)
        rc = libc.syscall(ctypes.c_long(nr), *[arg(a) for a in args])
        if rc == 0 and nr == CLONE_NR:
            os._exit(0)          # the clone's own child
        e = ctypes.get_errno()
        os.write(w, b"ok" if rc >= 0 else errno.errorcode.get(e, str(e)).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 64).decode()
    os.close(r)
    st = os.waitpid(pid, 0)[1]
    if os.WIFSIGNALED(st) and not out:
        return "signal %d" % os.WTERMSIG(st)
    return out or "no answer"

CLONE_NR = PROBES["clone_nr"]
print(json.dumps({label: attempt(nr, args) for label, (nr, args) in PROBES["calls"].items()}, sort_keys=True))
'''


def policy(sagebox):
    p = subprocess.run([sagebox, "policy", "--json"], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(p.stdout)


def _encode(args):
    return [list(a) if isinstance(a, bytes) else a for a in args]


def plan(pol):
    """label -> (syscall number, args, expected answer)."""
    out = {}
    for row in pol["rules"]:
        for name in row["names"]:
            nr = row["numbers"][name]
            if nr < 0:
                continue  # no such call on this architecture
            if row["when"] == "always":
                if name not in ARGS:
                    raise AssertionError(f"policy_probe.ARGS has no attempt for {name}: add one")
                out[name] = (nr, _encode(ARGS[name]), row["errno"])
            else:
                key = name
                if "only_where" in row:
                    key += " where arg%d == %d" % (row["only_where"]["arg"], row["only_where"]["equals"])
                if key not in CONDITIONAL:
                    raise AssertionError(f"policy_probe.CONDITIONAL has no attempts for {key}: add them")
                for label, (args, refused) in CONDITIONAL[key].items():
                    out[label] = (nr, _encode(args), row["errno"] if refused else "ok")
    return out


def probe_code(pol):
    """A Python program for `sagebox run --lang python`: prints one JSON
    object label -> answer."""
    p = plan(pol)
    clone_nr = next(r["numbers"]["clone"] for r in pol["rules"] if "clone" in r["names"])
    data = {"clone_nr": clone_nr, "calls": {k: [nr, args] for k, (nr, args, _) in p.items()}}
    return "PROBES_JSON = %r\n" % json.dumps(data) + PROBE


def expected(pol):
    return {k: want for k, (_, _, want) in plan(pol).items()}


def mismatches(pol, got):
    want = expected(pol)
    return {k: {"table": want[k], "got": got.get(k)} for k in want if got.get(k) != want[k]}
