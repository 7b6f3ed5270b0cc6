"""seccomp: the kernel interfaces escapes go through are refused."""
import platform
import signal
import subprocess
import sys

import pytest

from conftest import run

SYSCALLS = r"""
import ctypes, json, os, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.syscall.argtypes = [ctypes.c_long] + [ctypes.c_ulong] * 6
NR = dict(unshare=272, setns=308, mount=165, umount2=166, pivot_root=155, chroot=161, ptrace=101,
          bpf=321, io_uring_setup=425, keyctl=250, add_key=248, userfaultfd=323, perf_event_open=298,
          open_by_handle_at=304, process_vm_readv=310, kexec_load=246, init_module=175, fsopen=430,
          open_tree=428, move_mount=429, clone=56, clone3=435, personality=135, ioctl=16, syslog=103,
          acct=163, swapon=167, reboot=169)
def call(name, *args):
    args = list(args) + [0] * (6 - len(args))
    ctypes.set_errno(0)
    rc = libc.syscall(NR[name], *args)
    return 0 if rc >= 0 else errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID = 0x10000000, 0x20000, 0x40000000, 0x20000000
r, w = os.pipe()
res = {
  "unshare_user": call("unshare", CLONE_NEWUSER),
  "unshare_ns": call("unshare", CLONE_NEWNS),
  "setns": call("setns", 0, 0),
  "mount": call("mount", 0, 0, 0, 0, 0),
  "umount2": call("umount2", 0, 0),
  "pivot_root": call("pivot_root", 0, 0),
  "chroot": call("chroot", 0),
  "ptrace_traceme": call("ptrace", 0, 0, 0, 0),
  "ptrace_attach_init": call("ptrace", 16, 1, 0, 0),
  "bpf": call("bpf", 0, 0, 0),
  "io_uring_setup": call("io_uring_setup", 1, 0),
  "keyctl": call("keyctl", 0, 0, 0),
  "add_key": call("add_key", 0, 0, 0, 0, 0),
  "userfaultfd": call("userfaultfd", 0),
  "perf_event_open": call("perf_event_open", 0, 0, 0, 0, 0),
  "open_by_handle_at": call("open_by_handle_at", 0, 0, 0),
  "process_vm_readv": call("process_vm_readv", 1, 0, 0, 0, 0, 0),
  "kexec_load": call("kexec_load", 0, 0, 0, 0),
  "init_module": call("init_module", 0, 0, 0),
  "fsopen": call("fsopen", 0, 0),
  "open_tree": call("open_tree", 0, 0, 0),
  "move_mount": call("move_mount", 0, 0, 0, 0, 0),
  "syslog": call("syslog", 3, 0, 0),
  "acct": call("acct", 0),
  "swapon": call("swapon", 0, 0),
  "reboot": call("reboot", 0, 0, 0, 0),
  "clone_newuser": call("clone", CLONE_NEWUSER | 17, 0, 0, 0, 0),
  "clone_newnet": call("clone", CLONE_NEWNET | 17, 0, 0, 0, 0),
  "clone3": call("clone3", 0, 0),
  "personality_read_implies_exec": call("personality", 0x0400000),
  "personality_mmap_page_zero": call("personality", 0x0100000),
  "personality_high_bits": call("personality", 0x100000000),
  "personality_query": call("personality", 0xffffffff),
  "tiocsti": call("ioctl", w, 0x5412, 0),
  "tiocsti_high_bits": call("ioctl", w, 0xFFFFFFFF00005412, 0),
  "tioclinux_high_bits": call("ioctl", w, 0xFFFFFFFF0000541C, 0),
  "ordinary_ioctl_on_pipe": call("ioctl", w, 0x5401, 0),  # TCGETS: ENOTTY, reached the kernel
}
print(json.dumps(res))
"""


def test_dangerous_syscalls_denied():
    res = run(SYSCALLS).json()
    expected_eperm = [k for k in res if k not in ("clone3", "personality_query", "ordinary_ioctl_on_pipe")]
    wrong = {k: res[k] for k in expected_eperm if res[k] != "EPERM"}
    assert not wrong, wrong
    assert res["clone3"] == "ENOSYS"  # glibc falls back to clone, which is checked
    assert res["personality_query"] == 0
    assert res["ordinary_ioctl_on_pipe"] == "ENOTTY"  # the filter is not a blanket ioctl ban


def test_fork_and_threads_still_work():
    code = r"""
import os, threading, subprocess
t = threading.Thread(target=lambda: None); t.start(); t.join()
print(subprocess.run(["/bin/echo", "child"], capture_output=True, text=True).stdout.strip())
pid = os.fork()
if pid == 0:
    os._exit(7)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""
    r = run(code)
    assert r.out.split() == ["child", "7"], r


FOREIGN_ARCH = r"""
import ctypes, mmap, os, signal, sys
# machine code for: mov eax, NR; {insn}; ret
def run_code(code):
    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    return ctypes.CFUNCTYPE(ctypes.c_long)(addr)()
pid = os.fork()
if pid == 0:
    if sys.argv[-1] == "i386":
        run_code(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))          # getpid via int 0x80
    else:
        run_code(bytes([0xb8, 0x27, 0, 0, 0x40, 0x0f, 0x05, 0xc3]))     # x32 getpid via syscall
    os._exit(0)
st = os.waitpid(pid, 0)[1]
print("signal", os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0)
"""


def foreign_arch_code(arch):
    return "import sys; sys.argv.append(%r)\n" % arch + FOREIGN_ARCH


def outside_sandbox(arch):
    """What this kernel does with the same call when no sandbox is in the way."""
    p = subprocess.run([sys.executable, "-I", "-c", foreign_arch_code(arch)],
                       capture_output=True, text=True, timeout=60, cwd="/")
    return p.stdout.strip() or f"no output (exit {p.returncode}): {p.stderr[-300:]}"


@pytest.mark.parametrize("arch", ["i386", "x32"])
def test_foreign_architectures_killed(arch):
    if platform.machine() != "x86_64":
        pytest.skip(f"the {arch} ABI exists only on x86_64 (this is {platform.machine()})")
    # Where the kernel itself never lets the call reach its system call entry
    # (no IA32 emulation, or a hypervisor that faults on int 0x80), there is no
    # path for seccomp to close and nothing to assert. Where the call does
    # reach the kernel outside (it returns, even with ENOSYS), the sandbox
    # must kill it with SIGSYS.
    outside = outside_sandbox(arch)
    if outside != "signal 0":
        pytest.skip(f"{arch} system calls do not reach this kernel: outside any sandbox "
                    f"the same code ends with {outside}")
    r = run(foreign_arch_code(arch))
    assert r.out.strip() == f"signal {int(signal.SIGSYS)}", (arch, r)
