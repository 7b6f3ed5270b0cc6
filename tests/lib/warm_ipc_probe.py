"""IPC Objects left by one warm call must not be seen by
the next call on the same worker. Call 1 creates a POSIX message queue and a
SysV message queue, shared memory segment and semaphore set, and leaves a
message in each queue; call 2 looks for them. Before the fix, podman's call 2
read call 1's POSIX message (the queue outlived the call in the container's
IPC namespace) and the leftovers used the host user's 800 KB queue budget.
Now the syscall policy refuses mq_* everywhere, and the worker removes SysV
objects between calls."""
import json

LEAVE = r"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
def err():
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
r = {}
fd = libc.mq_open(b"/sagebox-left", os.O_CREAT | os.O_RDWR, 0o600, None)
r["mq_open"] = "ok" if fd >= 0 else err()
if fd >= 0:
    r["mq_send"] = "ok" if libc.mq_send(fd, b"secret-of-call-1", 16, 0) == 0 else err()
KEY = 0x5A6E
q = libc.msgget(KEY, 0o1600)          # IPC_CREAT | 0600
r["msgget"] = "ok" if q >= 0 else err()
if q >= 0:
    class Msg(ctypes.Structure):
        _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 32)]
    m = Msg(1, b"secret-of-call-1")
    r["msgsnd"] = "ok" if libc.msgsnd(q, ctypes.byref(m), 16, 0) == 0 else err()
r["shmget"] = "ok" if libc.shmget(KEY, 4096, 0o1600) >= 0 else err()
r["semget"] = "ok" if libc.semget(KEY, 1, 0o1600) >= 0 else err()
print(json.dumps(r))
"""

FIND = r"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
def err():
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
r = {}
fd = libc.mq_open(b"/sagebox-left", os.O_RDWR | os.O_NONBLOCK, 0, None)
r["mq_open"] = "found" if fd >= 0 else err()
KEY = 0x5A6E
r["msgget"] = "found" if libc.msgget(KEY, 0) >= 0 else err()
r["shmget"] = "found" if libc.shmget(KEY, 0, 0) >= 0 else err()
r["semget"] = "found" if libc.semget(KEY, 0, 0) >= 0 else err()
print(json.dumps(r))
"""


def check(mcp):
    """Two calls on one warm worker (python), the second after the first."""
    left = json.loads(mcp.run(LEAVE)["stdout"].strip().splitlines()[-1])
    found = json.loads(mcp.run(FIND)["stdout"].strip().splitlines()[-1])
    # POSIX queues: refused by the policy, in every call
    assert left["mq_open"] == "EPERM", left
    assert found["mq_open"] == "EPERM", found
    # SysV objects: a call may make them, the next one never sees them
    assert left["msgget"] == "ok" and left["msgsnd"] == "ok", left
    assert found == {"mq_open": "EPERM", "msgget": "ENOENT", "shmget": "ENOENT", "semget": "ENOENT"}, found
