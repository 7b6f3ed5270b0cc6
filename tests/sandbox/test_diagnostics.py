"""When the kernel refuses the namespaces, sagebox says exactly why (exit
125, a message and a hint), in `run` and in `status`."""
import ctypes
import json
import platform
import struct
import subprocess

import pytest

from conftest import BIN

SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
NR_UNSHARE = 272


def deny_unshare():
    """preexec_fn: a seccomp filter refusing unshare(2), as a container's
    default profile does."""
    insns = [
        (0x20, 0, 0, 0),                      # ld [nr]
        (0x15, 0, 1, NR_UNSHARE),             # jeq unshare ? next : allow
        (0x06, 0, 0, SECCOMP_RET_ERRNO | EPERM),
        (0x06, 0, 0, SECCOMP_RET_ALLOW),
    ]
    buf = b"".join(struct.pack("HBBI", *i) for i in insns)
    filt = ctypes.create_string_buffer(buf)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(insns), ctypes.addressof(filt))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, FILTER
        raise OSError(ctypes.get_errno(), "seccomp")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="syscall number is x86_64's")
def test_userns_refused_is_explained():
    r = subprocess.run([BIN, "run", "--backend", "native", "--lang", "python", "-"], input="print(1)",
                       capture_output=True, text=True, timeout=30, preexec_fn=deny_unshare)
    assert r.returncode == 125, r
    assert "user namespace" in r.stderr and "seccomp" in r.stderr, r.stderr
    assert "hint:" in r.stderr
    st = subprocess.run([BIN, "status", "--json"], capture_output=True, text=True, timeout=30,
                        preexec_fn=deny_unshare)
    be = json.loads(st.stdout)["backend"]
    assert be["available"] is False
    assert be["user_namespaces"]["available"] is False
    assert "seccomp" in be["error"] and be["hint"]
