# The self-test probe: runs INSIDE the sandbox (any backend) and checks from
# there what the sandbox promises. The host prepends EXPECT = {...} (the
# backend's own `enforced` report), HOST = {"home": ...} and MEMORY_BYTES.
# Prints one JSON line: a list of {"name", "ok", "detail"}; ok is null for a
# check that does not apply to the backend. A check that fails on a backend that
# does not isolate (host) is reported as failing: that is the truth.
import ctypes
import errno
import json
import os
import signal
import socket
import time

checks = []


def check(name, ok, detail):
    checks.append({"name": name, "ok": None if ok is None else bool(ok), "detail": detail})


def status_fields():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.syscall.argtypes = [ctypes.c_long] + [ctypes.c_ulong] * 3


def errname(e):
    return errno.errorcode.get(e, str(e))


st = status_fields()

# identity: our uid, and the host uid it maps to (the uid_map line that
# covers it; without a user namespace the map is the identity)
uid = os.getuid()
host_uid = "?"
try:
    for line in open("/proc/self/uid_map"):
        inside, outside, count = (int(x) for x in line.split())
        if inside <= uid < inside + count:
            host_uid = str(outside + uid - inside)
except (OSError, ValueError):
    pass
check("uid is not root", uid != 0 and host_uid not in ("0", "?"),
      f"uid {uid} inside, host uid {host_uid} (from /proc/self/uid_map)")

caps = {k: st.get(k, "?") for k in ("CapEff", "CapPrm", "CapBnd")}
check("no capabilities", all(v == "0000000000000000" for v in caps.values()),
      ", ".join(f"{k} {v}" for k, v in caps.items()))
check("no_new_privs", st.get("NoNewPrivs") == "1", f"NoNewPrivs {st.get('NoNewPrivs', '?')}")
check("seccomp filter", st.get("Seccomp") == "2", f"Seccomp {st.get('Seccomp', '?')} (2 = filter)")

# seccomp really refuses: unshare(CLONE_NEWUSER), TIOCSTI with high bits
r, w = os.pipe()
ctypes.set_errno(0)
rc1 = libc.syscall(272, 0x10000000, 0, 0, 0)
e1 = ctypes.get_errno()
ctypes.set_errno(0)
rc2 = libc.syscall(16, w, 0xFFFFFFFF00005412, 0, 0)
e2 = ctypes.get_errno()
# TIOCSTI is harmless where no terminal is reachable at all (a container
# with pipes for stdio and no controlling tty): ENOTTY then counts too.
def terminal_reachable():
    if any(os.isatty(fd) for fd in (0, 1, 2)):
        return True
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
        return True
    except OSError:
        return False


tty = terminal_reachable()
tiocsti_ok = rc2 < 0 and (e2 == errno.EPERM or (e2 == errno.ENOTTY and not tty))
check("namespace and TIOCSTI calls refused", rc1 < 0 and e1 == errno.EPERM and tiocsti_ok,
      f"unshare(CLONE_NEWUSER): {'ok' if rc1 >= 0 else errname(e1)}, "
      f"ioctl(TIOCSTI|0xffffffff00000000): {'ok' if rc2 >= 0 else errname(e2)}"
      f"{'' if tty else ' (no terminal reachable)'}")

# network
reached = []
for host, port in (("1.1.1.1", 53), ("10.0.2.2", 80)):
    s = socket.socket()
    s.settimeout(1.0)
    try:
        s.connect((host, port))
        reached.append(f"{host}:{port}")
    except OSError:
        pass
    finally:
        s.close()
ifaces = sorted(n for _, n in socket.if_nameindex())
check("no network", not reached and ifaces == ["lo"],
      f"interfaces {ifaces}; reached {reached or 'nothing'}")

# private host files: the host's shadow file, root's home and the home of
# the user who started sagebox (HOST["home"]) are not readable here. A
# container image may have its own /home: only the host's paths count.
visible = []
host_paths = ["/etc/shadow", "/root"]
if HOST.get("home") not in (None, "", "/", "/tmp", "/root"):
    host_paths.append(HOST["home"])
for p in host_paths:
    try:
        if os.path.isdir(p):
            os.listdir(p)
            visible.append(p)
        else:
            open(p, "rb").close()
            visible.append(p)
    except OSError:
        pass
check("host secrets invisible", not visible, "visible: " + ", ".join(visible) if visible
      else ", ".join(host_paths) + ": absent or unreadable")

# read-only system, writable /tmp
# (No remount attempt here: on the host backend, as root, it would work.)
probe_path = f"/usr/.sagebox-self-test-{os.getpid()}"
try:
    fd = os.open(probe_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    os.unlink(probe_path)
    check("system read-only", False, f"created {probe_path} (removed again)")
except OSError as e:
    check("system read-only", True, f"creating a file in /usr: {errname(e.errno)}")
try:
    p = os.path.join(os.environ.get("TMPDIR", "/tmp"), ".sagebox-self-test")
    with open(p, "w") as f:
        f.write("x")
    os.unlink(p)
    check("/tmp writable", True, f"wrote {p}")
except OSError as e:
    check("/tmp writable", False, f"{p}: {errname(e.errno)}")

# pid namespace: every visible process belongs to the sandbox
others = []
pids = [p for p in os.listdir("/proc") if p.isdigit()]
for p in pids:
    try:
        with open(f"/proc/{p}/status") as f:
            for line in f:
                if line.startswith("Uid:") and line.split()[1] != str(uid):
                    others.append(p)
    except OSError:
        pass
check("own pid namespace", os.path.exists("/proc/1") and not others and len(pids) < 50,
      f"{len(pids)} processes visible" + (f", {len(others)} of other users" if others else ", all the sandbox's"))

# memory limit: a child allocating past it must fail or be killed
mem_claim = EXPECT.get("memory") or (EXPECT.get("limits") or {}).get("memory") or {}
claimed = mem_claim.get("enforced_by")
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        chunks = []
        for _ in range(MEMORY_BYTES // (16 << 20) + 8):
            chunks.append(bytearray(16 << 20))
        os._exit(0)
    except MemoryError:
        os._exit(3)
_, status = os.waitpid(pid, 0)
took = time.monotonic() - t0
if os.WIFSIGNALED(status):
    check("memory limit enforced", True,
          f"allocating past {MEMORY_BYTES >> 20} MiB: killed by signal {os.WTERMSIG(status)} "
          f"({claimed}, {took:.1f} s)")
elif os.WEXITSTATUS(status) == 3:
    check("memory limit enforced", True, f"allocating past {MEMORY_BYTES >> 20} MiB: MemoryError ({claimed})")
else:
    check("memory limit enforced", False, f"allocated {(MEMORY_BYTES >> 20) + 128} MiB with a "
          f"{MEMORY_BYTES >> 20} MiB limit (claimed: {claimed})")

# Landlock: does what the backend claims hold?
ll = EXPECT.get("landlock") or {}
abi = ll.get("abi") or 0
if "landlock" not in EXPECT and EXPECT.get("backend") in ("podman", "docker"):
    # Not part of this backend's design: the container's own isolation
    # (namespaces, seccomp, read-only root) stands in its place.
    check("landlock", None, f"not used by the {EXPECT['backend']} backend")
elif not ll.get("enforced"):
    check("landlock", False, "not enforced by this backend" if not ll
          else "not enforced: " + str(ll.get("note", "")))
else:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        bind = "allowed"
    except OSError as e:
        bind = errname(e.errno)
    s.close()
    ctypes.set_errno(0)
    sig = "allowed" if libc.kill(1, 0) == 0 else errname(ctypes.get_errno())
    ok = (abi < 4 or bind == "EACCES") and (abi < 6 or sig == "EPERM")
    check("landlock", ok, f"ABI {abi}: TCP bind {bind}, signal to pid 1 {sig}")

# The network policy as enforced: with hosts listed, the proxy
# is asked from inside for an unlisted host (refused: 403) and for the first
# listed one (let through: connected, or 502 when that host does not answer
# here); with none, the sandbox has no proxy to ask.
NET = HOST.get("network")
if NET:
    def ask(target):
        try:
            s = socket.create_connection(("127.0.0.1", NET["port"]), timeout=20)
            s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            line = s.recv(4096).decode("latin-1").split("\r\n", 1)[0]
            s.close()
            return line
        except OSError as e:
            return "no answer: " + errname(e.errno)
    refused = ask("sagebox-self-test.invalid:80")
    check("network: an unlisted host is refused", " 403 " in refused, f"CONNECT sagebox-self-test.invalid:80: {refused}")
    allowed = ask(NET["allowed"])
    check("network: a listed host is let through", allowed.startswith("HTTP/1.") and " 403 " not in allowed,
          f"CONNECT {NET['allowed']}: {allowed} (200: connected; 502: let through, but the host did not answer)")
else:
    proxy = [k for k in os.environ if k.lower().endswith("_proxy")]
    check("network: none", not proxy, "no proxy variables" if not proxy else "proxy variables set: " + ", ".join(proxy))

print(json.dumps(checks))
