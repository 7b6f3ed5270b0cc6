#!/usr/bin/env python3
"""The system unit's hardening leaves the sandbox a /proc it may mount.

A process in a user namespace may mount a proc only while a proc with
nothing mounted inside it (but on permanently empty directories) is in its
mount namespace (the kernel's fs/namespace.c, mount_too_revealing): else a
fresh proc would undo the masks. Some systemd options mount inside /proc,
and systemd 253 and later switch to the unit's root with pivot_root and
detach the old tree, so that masked /proc is the only one left (systemd 252
moved the unit's root over the old tree with MS_MOVE and chroot, and the
unmasked /proc beneath still counted).

This builds, in a private mount namespace (as root), what systemd's
src/core/namespace.c mounts at and below /proc for the options the unit
sets, switches root as systemd 253+ does, and runs a call as an
unprivileged user, as the unit's user would: it must pass. Two controls
show that the reproduction is faithful: with ProtectKernelLogs='s mask of
/proc/kmsg added the call fails with the sandbox's "mount a fresh /proc";
with the same mask under systemd 252's switch it passes.

  unit_proc.py SAGEBOX SYSTEM_UNIT          (exit 77: skipped, not root)
"""
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from shared_binary import shared_copy  # noqa: E402

sagebox, unit = os.path.abspath(sys.argv[1]), sys.argv[2]
USER = os.environ.get("SB_UNIT_PROC_USER", "nobody")
MARK = "unit-proc-call-ran"

# What systemd (src/core/namespace.c: its protect_kernel_*_proc_table, the
# hostname entries, mount_procfs) mounts at or below /proc for an option of
# [Service], when the value turns it on: (kind, path, proc options).
# "inaccessible" binds a mode-0000 node of the path's type over it,
# "read-only" binds the path over itself read-only, "proc" mounts a proc of
# its own over it.
TUNABLES_RO = ("/proc/acpi", "/proc/apm", "/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq",
               "/proc/latency_stats", "/proc/mtrr", "/proc/scsi", "/proc/sys", "/proc/sysrq-trigger",
               "/proc/timer_stats")
OPTIONS = {
    "ProtectKernelLogs": (lambda v: truthy(v), [("inaccessible", "/proc/kmsg", None)]),
    "ProtectKernelTunables": (lambda v: truthy(v),
                              [("read-only", p, None) for p in TUNABLES_RO]
                              + [("inaccessible", "/proc/kallsyms", None), ("inaccessible", "/proc/kcore", None)]),
    "ProtectHostname": (lambda v: truthy(v) or v == "private",
                        [("read-only", "/proc/sys/kernel/hostname", None),
                         ("read-only", "/proc/sys/kernel/domainname", None)]),
    "ProtectProc": (lambda v: v not in ("", "default"), [("proc", "/proc", "hidepid={value}")]),
    "ProcSubset": (lambda v: v == "pid", [("proc", "/proc", "subset=pid")]),
}
# Path lists: the entries at or below /proc.
PATH_OPTIONS = {"InaccessiblePaths": "inaccessible", "ReadOnlyPaths": "read-only"}


def truthy(v):
    return v.lower() in ("1", "yes", "true", "on")


def service_options(path):
    """[Service] Key=Value pairs, in order; an empty value resets a list."""
    out, section = [], None
    for line in open(path):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]" and "=" in line:
            k, v = line.split("=", 1)
            out.append((k.strip(), v.strip()))
    return out


def proc_mounts_of(options):
    """The mounts the options make at or below /proc."""
    mounts, last = [], {}
    for k, v in options:
        last[k] = v
        if k in PATH_OPTIONS:
            if v == "":
                mounts = [m for m in mounts if m[3] != k]
            for p in v.split():
                p = p.lstrip("-+")
                if p == "/proc" or p.startswith("/proc/"):
                    mounts.append((PATH_OPTIONS[k], p, None, k))
    for k, (on, made) in OPTIONS.items():
        if k in last and on(last[k]):
            mounts += [(kind, p, (o or "").format(value=last[k]) or None, k) for kind, p, o in made]
    return [m[:3] for m in mounts]


def script(mounts, switch, home, uid, gid):
    """A shell script for `unshare -m`: the unit's root as systemd builds it
    (a recursive bind of /, the option's mounts in it, then the switch),
    then the call as the unit's user."""
    q = shlex.quote
    lines = ["set -eu", f"r={q(home)}/root", 'mkdir -p "$r"', 'mount --rbind / "$r"',
             f"install -d -m 0 {q(home)}/inaccessible-dir", f"install -m 0 /dev/null {q(home)}/inaccessible-reg"]
    for kind, path, opts in mounts:
        t = '"$r"' + q(path)
        lines.append(f"if [ -e {t} ]; then")
        if kind == "inaccessible":
            node = f"{q(home)}/inaccessible-dir" if os.path.isdir(path) else f"{q(home)}/inaccessible-reg"
            lines += [f"  mount --bind {node} {t}", f"  mount -o remount,bind,ro {t}"]
        elif kind == "read-only":
            lines += [f"  mount --bind {t} {t}", f"  mount -o remount,bind,ro {t}"]
        else:
            lines.append(f"  mount -t proc -o nosuid,nodev,noexec{',' + opts if opts else ''} proc {t}")
        lines.append("fi")
    env = {"PATH": "/usr/bin:/bin", "HOME": f"{home}/home", "XDG_STATE_HOME": f"{home}/state",
           "XDG_CONFIG_HOME": f"{home}/config", "XDG_CACHE_HOME": f"{home}/cache",
           "XDG_RUNTIME_DIR": f"{home}/run"}
    call = (f"setpriv --reuid={uid} --regid={gid} --clear-groups env -i "
            + " ".join(q(f"{k}={v}") for k, v in env.items())
            + f" {q(sagebox)} run --backend native --lang shell --timeout 60 -")
    lines.append('cd "$r"')
    if switch == "pivot_root":
        # systemd 253+ (mount_switch_root): the old root detached.
        lines += ["pivot_root . .", "umount -l .", "cd /", f"exec {call}"]
    else:
        # systemd 252 (mount_move_root): the old tree stays beneath.
        lines += ["mount --move . /", f"exec chroot . {call}"]
    return "\n".join(lines) + "\n"


def call(mounts, switch):
    pw = pwd.getpwnam(USER)
    with tempfile.TemporaryDirectory(prefix="sagebox-unit-proc-") as home:
        for d in ("home", "state", "config", "cache", "run"):
            os.mkdir(os.path.join(home, d), 0o700)
            os.chown(os.path.join(home, d), pw.pw_uid, pw.pw_gid)
        os.chmod(home, 0o755)
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            script(mounts, switch, home, pw.pw_uid, pw.pw_gid)],
                           input=f"echo {MARK}\n", capture_output=True, text=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


failures = []


def check(ok, what, out):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        print("     " + out.replace("\n", "\n     ")[:2000])
        failures.append(what)


if os.geteuid() != 0:
    print("skipped: needs root (a private mount namespace with the unit's mounts)")
    sys.exit(77)
for tool in ("unshare", "setpriv", "pivot_root", "chroot"):
    if not shutil.which(tool):
        print(f"FAIL {tool} is installed (Debian: util-linux, coreutils)")
        sys.exit(1)

# The call runs as the unit's user (shared_binary.py says why a copy).
sagebox = shared_copy(sagebox, "sagebox-unit-proc-bin.")

opts = service_options(unit)
made = proc_mounts_of(opts)
kmsg = proc_mounts_of([("ProtectKernelLogs", "yes")])
print(f"the unit's mounts at or below /proc: {made or 'none'}")

rc, out = call(made, "pivot_root")
check(rc == 0 and MARK in out, f"a call with the unit's /proc mounts, root switched as systemd 253+ does (exit {rc})", out)

rc, out = call(made + kmsg, "pivot_root")
check(rc == 125 and "mount a fresh /proc" in out and "ProtectKernelLogs=" in out,
      f"control: ProtectKernelLogs='s /proc/kmsg mask added, systemd 253+: the sandbox refuses, "
      f"naming the option (exit {rc})", out)

rc, out = call(made + kmsg, "move")
check(rc == 0 and MARK in out,
      f"control: the same under systemd 252's switch (MS_MOVE, old tree beneath) runs (exit {rc})", out)

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
