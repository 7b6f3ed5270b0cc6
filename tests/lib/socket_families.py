"""Socket families from inside a sandbox, the way code makes them: Python's
socket module. The syscall policy allows AF_UNIX, AF_INET, AF_INET6 and
AF_NETLINK's routing protocol, and refuses every other family with
EAFNOSUPPORT (what a kernel built without the family answers) and every
other netlink protocol with EPROTONOSUPPORT. AF_VSOCK above all: on a
virtual machine with /dev/vsock it reaches the hypervisor and host services
around the proxy and `network = none`. tests/sandbox/test_network.py and
tests/podman/test_podman.py run CODE and compare with EXPECTED."""
import json

CODE = r"""
import errno, json, socket
def make(family, type_, proto=0):
    try:
        socket.socket(family, type_, proto).close()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
S, D, R, Q = socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET
r = {
    "AF_VSOCK": make(40, S),
    "AF_PACKET": make(17, D),
    "AF_BLUETOOTH": make(31, R, 1),
    "AF_ALG": make(38, Q),
    "AF_TIPC": make(30, R),
    "AF_RDS": make(21, Q),
    "AF_CAN": make(29, R, 1),
    "AF_XDP": make(44, R),
    "AF_KEY": make(15, R, 2),
    "NETLINK_AUDIT": make(16, R, 9),
    "NETLINK_KOBJECT_UEVENT": make(16, D, 15),
    "NETLINK_GENERIC": make(16, R, 16),
    "NETLINK_SOCK_DIAG": make(16, R, 4),
    "NETLINK_NETFILTER": make(16, R, 12),
    "AF_UNIX": make(1, S),
    "AF_INET": make(2, S),
    "AF_INET6": make(10, D),
    "NETLINK_ROUTE": make(16, R, 0),
}
try:
    a, b = socket.socketpair()
    a.send(b"ping")
    r["socketpair"] = b.recv(4).decode()
except OSError as e:
    r["socketpair"] = errno.errorcode.get(e.errno, str(e.errno))
try:
    socket.socketpair(40, S)
    r["socketpair AF_VSOCK"] = "ok"
except OSError as e:
    r["socketpair AF_VSOCK"] = errno.errorcode.get(e.errno, str(e.errno))
# what getaddrinfo and getifaddrs read through NETLINK_ROUTE
r["interfaces"] = sorted(n for _, n in socket.if_nameindex())
try:
    socket.getaddrinfo("127.0.0.1", 80, flags=socket.AI_ADDRCONFIG)
    r["getaddrinfo"] = "ok"
except OSError as e:
    r["getaddrinfo"] = str(e)
print(json.dumps(r, sort_keys=True))
"""

REFUSED_FAMILIES = ("AF_VSOCK", "AF_PACKET", "AF_BLUETOOTH", "AF_ALG", "AF_TIPC", "AF_RDS", "AF_CAN", "AF_XDP",
                    "AF_KEY", "socketpair AF_VSOCK")
REFUSED_NETLINK = ("NETLINK_AUDIT", "NETLINK_KOBJECT_UEVENT", "NETLINK_GENERIC", "NETLINK_SOCK_DIAG",
                   "NETLINK_NETFILTER")

EXPECTED = {k: "EAFNOSUPPORT" for k in REFUSED_FAMILIES} | {k: "EPROTONOSUPPORT" for k in REFUSED_NETLINK} | {
    "AF_UNIX": "ok", "AF_INET": "ok", "AF_INET6": "ok", "NETLINK_ROUTE": "ok", "socketpair": "ping",
    "interfaces": ["lo"], "getaddrinfo": "ok"}


def result(stdout):
    return json.loads(stdout.strip().splitlines()[-1])
