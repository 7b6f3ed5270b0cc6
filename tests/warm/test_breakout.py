"""The break-out cases of tests/sandbox, on warm workers: each attempt is
stopped as in a fresh sandbox, and no later job is harmed (the `healthy`
fixture runs Python and Sage jobs after each test)."""
import time

from bombs import FORK_BOMB_PYTHON, FORK_BOMB_SHELL  # tests/lib
from conftest import ok


def test_memory_bomb_python(healthy):
    r = healthy.run("chunks = []\nfor i in range(64):\n    chunks.append(bytearray(16 << 20))\nprint('ALLOCATED')")
    assert "ALLOCATED" not in r["stdout"] and r["exit_code"] != 0, r
    assert r["signal"] == "SIGKILL" or "MemoryError" in r["stderr"], r


def test_memory_bomb_sage(healthy):
    r = healthy.run("L = []\nfor i in range(64):\n    L.append(bytearray(16 << 20))\nprint('ALLOCATED')", "sage")
    assert "ALLOCATED" not in r["stdout"] and r["exit_code"] != 0, r


def test_memory_promise_kept(healthy):
    r = healthy.run("b = bytearray(100 << 20); print('ok', len(b) >> 20)")
    assert r["stdout"] == "ok 100\n", r
    r = healthy.run("b = bytearray(100 << 20); print('ok', len(b) >> 20)", "sage")
    assert r["stdout"] == "ok 100\n", r


def test_fork_bomb_python(healthy):
    r = healthy.run(FORK_BOMB_PYTHON, timeout_s=20)
    n, err = r["stdout"].split()
    assert err == "EAGAIN" and int(n) < 96, r
    # the next job can fork again at once: the sleepers are gone
    r = healthy.run("import subprocess\nfor _ in range(50): subprocess.run(['true'], check=True)\nprint('forked')")
    assert r["stdout"] == "forked\n", r


def test_fork_bomb_shell(healthy):
    t0 = time.time()
    r = healthy.run(FORK_BOMB_SHELL, "shell", timeout_s=8)
    assert time.time() - t0 < 15, r


def test_timeout(healthy):
    t0 = time.time()
    r = healthy.run("import subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)\nwhile True: pass",
                    timeout_s=2)
    took = time.time() - t0
    assert r["timed_out"] is True and r["exit_code"] is None and r["signal"] is None, r
    assert 1.9 < took < 6, took
    r = healthy.run("import os\nprint([p for p in os.listdir('/proc') if p.isdigit() and "
                    "open(f'/proc/{p}/cmdline','rb').read().split(b'\\0')[0].endswith(b'sleep')])")
    assert r["stdout"] == "[]\n", r


def test_timeout_sage(healthy):
    r = healthy.run("while True:\n    factor(2^64 + 1)", "sage", timeout_s=2)
    assert r["timed_out"] is True, r


def test_output_flood(healthy):
    t0 = time.time()
    r = healthy.run("while True: print('x' * 1000)", timeout_s=30)
    assert r["output_limit_exceeded"] is True and r["truncated"]["stdout"] is True, r
    assert r["stdout_total_bytes" if "stdout_total_bytes" in r else "truncated"]
    assert time.time() - t0 < 20


def test_escape_attempts_denied(healthy):
    r = healthy.run(r"""
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def err(rc):
    return "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno())
out = {}
out["unshare"] = err(libc.unshare(0x10000000))
out["mount"] = err(libc.mount(b"tmpfs", b"/tmp/work", b"tmpfs", 0, None))
out["ptrace_parent"] = err(libc.ptrace(16, os.getppid(), 0, 0))
try:
    open("/etc/shadow").read(); out["shadow"] = "readable"
except OSError as e:
    out["shadow"] = errno.errorcode[e.errno]
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2); out["net"] = "connected"
except OSError as e:
    out["net"] = "blocked"
print(out)
""")
    out = eval(r["stdout"])
    assert out["unshare"] == "EPERM" and out["mount"] == "EPERM" and out["ptrace_parent"] == "EPERM", out
    assert out["shadow"] in ("ENOENT", "EACCES") and out["net"] == "blocked", out


def test_job_cannot_reach_the_protocol_channel(healthy):
    r = healthy.run(r"""
import os, errno, sys
# the job's own display pipe is its to write (the host checks what comes)
fig = sys.modules['sagebox_driver.items']._out.fd
fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))
ppid = os.getppid()
reached = []
for fd in range(3, 1024):
    if fd == fig:
        continue
    try:
        os.write(fd, b"\x00\x00\x00\x10garbage-garbage!")
        reached.append(("own", fd))
    except OSError:
        pass
try:
    names = os.listdir(f"/proc/{ppid}/fd")
except OSError as e:
    names = []
for n in names:
    try:
        fd = os.open(f"/proc/{ppid}/fd/{n}", os.O_WRONLY)
        os.write(fd, b"\x00\x00\x00\x10garbage-garbage!")
        reached.append(("proc", n))
    except OSError:
        pass
for what in ("mem", "environ", "maps"):
    try:
        open(f"/proc/{ppid}/{what}", "rb").read(1)
        reached.append(("read", what))
    except OSError:
        pass
print(fds[:3], reached)
""")
    assert r["stdout"] == "[0, 1, 2] []\n", r


def test_job_that_kills_its_worker_harms_no_later_job(healthy):
    r = healthy.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('sent')")
    # Landlock (ABI 6) stops the signal; without it the worker dies and
    # this job gets a sandbox error. Either way the next job works.
    assert "sent" in r["stdout"] or "error" in r or "PermissionError" in r["stderr"], r
    r = healthy.run("import os, signal\nos.kill(-1, signal.SIGKILL)\nprint('sent')")
    assert r["exit_code"] is not None or r["signal"] or "error" in r, r
    r = healthy.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", "sage")


def test_job_stopping_everything_harms_no_later_job(healthy):
    r = healthy.run("import os, signal\nfor p in os.listdir('/proc'):\n    if p.isdigit() and int(p) != os.getpid():\n"
                    "        try: os.kill(int(p), signal.SIGSTOP)\n        except OSError: pass\nprint('done')")
    assert "done" in r["stdout"], r
