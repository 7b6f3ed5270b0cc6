"""The network setting on Podman (and Docker through podman's API)
stage 4: sagebox's proxy runs on the host as the test user, each container
gets its own socket directory bound read-only at /run/sagebox-net and the
proxy variables, and keeps --network=none: the driver's relay serves the
socket on the container's own loopback. As tests/network/test_inside.py,
sagebox runs in a mount namespace of its own with a test hosts file over
/etc/hosts (its proxy resolves names there; podman does not read it: the
containers get --no-hosts), and the origin listens on the host's loopback,
which a container reaches only through the proxy."""
import json
import os
import signal
import subprocess

import pytest
from mcpclient import MCP
from netorigin import AROUND, GET, check_gets, check_session_get, origin_server

from conftest import DOCKER, IMAGE, SAGEBOX, cmdline, descendants, hosts_file, ours, status, wait_for, with_hosts

HOSTS = "127.0.0.1 localhost\n127.0.0.1 exact.test\n"


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    return hosts_file(tmp_path_factory, HOSTS)


@pytest.fixture(scope="module")
def origin():
    yield from origin_server()


def net(origin):
    # exact.test resolves to loopback: its address is listed too.
    return f"exact.test:{origin}, 127.0.0.1:{origin}"


def server(hosts, origin, *flags):
    return MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE, "--network", net(origin), *flags),
               prefix=with_hosts(hosts))


# A server per test: the suite checks after each test that no container of
# ours is left, so a server (and its warm containers) may not outlive one.
@pytest.fixture
def warm(hosts, origin):
    m = server(hosts, origin)
    yield m
    m.close()


@pytest.fixture
def fresh(hosts, origin):
    m = server(hosts, origin, "--isolation", "fresh")
    yield m
    m.close()




def py(m, code):
    r = m.run(code, "python")
    assert not r.get("error") and not r.get("isError"), r
    return r["stdout"]


def test_get_urllib_and_curl_warm_and_fresh(warm, fresh, origin):
    check_gets((warm, fresh), origin)


def test_get_in_a_session(warm, origin):
    check_session_get(warm, origin)


def test_refused_host_gets_the_one_liner(warm):
    assert py(warm, GET.format(url="http://oeis.org/A000108")) == \
        "403 sagebox: oeis.org:80 is not in the network allow-list (setting: network)\n"


def test_no_way_around_the_proxy(warm, origin):
    out = py(warm, AROUND + f"""
print(tcp(("127.0.0.1", {origin})), tcp(("10.1.2.3", 80)), udp(("8.8.8.8", 53), q), udp(("10.1.2.3", 9)))
try:
    socket.getaddrinfo("exact.test", 80); print("RESOLVED")
except OSError:
    print("no resolver")
print(os.path.exists("/run/sagebox-net/proxy.sock"), os.environ["HTTP_PROXY"], os.environ["NO_PROXY"])
try:
    open("/run/sagebox-net/x", "w"); print("WROTE")
except OSError as e:
    print(type(e).__name__)
""").splitlines()
    tcp_loop, tcp_lan, dns, udp_lan = out[0].split()
    # The container's loopback is not the host's: the origin is not there.
    assert tcp_loop == "ConnectionRefusedError", out
    assert tcp_lan != "CONNECTED" and "ANSWERED" not in (dns, udp_lan), out
    assert out[1] == "no resolver", out
    assert out[2] == "True http://127.0.0.1:3128 localhost,127.0.0.1", out
    # read-only: the socket cannot be replaced from inside
    assert out[3] in ("OSError", "PermissionError"), out


def test_status_shows_the_proxy_and_the_bind(warm):
    st = warm.status()
    assert st["network"]["proxy_running"] is True and "exact.test" in st["network"]["allow"], st["network"]
    # the job's sandbox report names the bind and the relay
    sb = warm.run("print(1)", "python")["sandbox"]
    assert sb["backend"] == "podman" and "--network=none" in sb["network"], sb
    assert "127.0.0.1:3128" in sb["network"] and "/run/sagebox-net" in sb["network"], sb


def sagebox_of(m):
    """The sagebox process under unshare and runuser."""
    for p in descendants(m.proc.pid):
        c = cmdline(p)
        if c and c[0] == SAGEBOX and "mcp" in c:
            return p
    return None


def test_nothing_left_after_a_killed_sagebox(hosts, origin):
    m = server(hosts, origin)
    try:
        assert py(m, GET.format(url=f"http://exact.test:{origin}/k")).startswith("hello")
        sb = sagebox_of(m)
        assert sb
        proxies = [p for p in descendants(sb) if cmdline(p)[:2] == ["sagebox", "proxy"]]
        assert len(proxies) == 1, proxies
        c = cmdline(proxies[0])
        d = c[c.index("--socket-dir") + 1]
        assert [e for e in os.listdir(d) if os.path.exists(f"{d}/{e}/proxy.sock")]
        os.kill(sb, signal.SIGKILL)
        assert wait_for(lambda: not os.path.exists(f"/proc/{proxies[0]}") and not os.path.exists(d),
                        timeout=30), "the proxy or its directory outlived sagebox"
        # its warm containers end at their stdin's EOF; whatever is left
        # goes at the next start of a podman-backed sagebox (as in
        # test_podman.py's SIGKILL tests)
        status()
        assert wait_for(lambda: not ours(), timeout=30), ours()
    finally:
        m.close()


def test_docker_fresh_get(hosts, origin, docker_socket):
    argv = with_hosts(hosts, docker_socket) + [SAGEBOX, "run", "--json", "--backend", "docker", "--podman", DOCKER,
                                           "--image", IMAGE, "--network", net(origin), "--lang", "python", "-"]
    p = subprocess.run(argv, input=GET.format(url=f"http://exact.test:{origin}/d").encode(), capture_output=True,
                       timeout=300, cwd="/")
    res = json.loads(p.stdout.decode())
    assert res["stdout"] == f"hello from origin /d host=exact.test:{origin}\n", (res, p.stderr)


def test_self_test_asks_the_proxy_from_inside(hosts, origin):
    argv = with_hosts(hosts) + [SAGEBOX, "self-test", "--json", "--backend", "podman", "--image", IMAGE,
                            "--network", net(origin)]
    p = subprocess.run(argv, capture_output=True, timeout=600, cwd="/")
    checks = {c["name"]: c for c in json.loads(p.stdout.decode())["checks"]}
    refused = checks["network: an unlisted host is refused"]
    allowed = checks["network: a listed host is let through"]
    assert refused["ok"] and " 403 " in refused["detail"], refused
    assert allowed["ok"] and f"CONNECT exact.test:{origin}: HTTP/1.1 200" in allowed["detail"], allowed
