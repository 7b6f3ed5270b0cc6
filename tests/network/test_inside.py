"""The network setting from INSIDE the sandbox: sagebox
starts its proxy, binds each sandbox's own socket into it, the driver's
relay serves it on 127.0.0.1, and the code's ordinary clients (urllib,
curl) reach the listed hosts and nothing else. sagebox runs in a mount
namespace of its own with the test hosts file over /etc/hosts (its proxy
resolves names there); the origin servers listen on the host's loopback,
which no sandbox can reach but through the proxy."""
import glob
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import BIN, HOSTS, Origin
from mcpclient import MCP
from netorigin import AROUND, GET, check_gets, check_session_get, origin_server


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root: sagebox's hosts file is bound over /etc/hosts in a mount namespace")
    if not shutil.which("unshare"):
        pytest.skip("needs unshare (util-linux)")
    p = tmp_path_factory.mktemp("hosts") / "hosts"
    p.write_text(HOSTS)
    return p


@pytest.fixture(scope="module")
def origin():
    yield from origin_server()


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """An HTTPS origin for exact.test with a certificate of a test CA; the
    code inside trusts that CA for the test (its PEM in the code)."""
    d = tmp_path_factory.mktemp("tls")

    def ssl_(*a):
        subprocess.run(["openssl", *a], cwd=d, check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    ssl_("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=sagebox test CA")
    ssl_("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=exact.test")
    (d / "ext").write_text("subjectAltName=DNS:exact.test\n")
    ssl_("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
         "-out", "srv.pem", "-days", "2", "-extfile", "ext")
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "srv.pem", d / "srv.key")
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1], (d / "ca.pem").read_text()
    srv.shutdown()


def network(origin, tls_port):
    # The origins listen on loopback: their address is listed too.
    # loop.test:81 and meta.test:80 are listed by name only.
    return (f"exact.test:{origin}, exact.test:{tls_port}, 127.0.0.1:{origin}, 127.0.0.1:{tls_port}, "
            f"loop.test:81, meta.test:80, oeis.org:{tls_port}")


def prefix(hosts):
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)]


def server(hosts, net, *flags, audit=None):
    args = ["--network", net, *flags]
    if audit:
        args += ["--audit-log", str(audit)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_") or k == "SAGEBOX_BIN"}
    return MCP(BIN, args, env=env, prefix=prefix(hosts))


@pytest.fixture(scope="module")
def warm(hosts, origin, tls, tmp_path_factory):
    audit = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    m = server(hosts, network(origin, tls[0]), audit=audit)
    m.audit = audit
    yield m
    m.close()


@pytest.fixture(scope="module")
def fresh(hosts, origin, tls):
    m = server(hosts, network(origin, tls[0]), "--isolation", "fresh")
    yield m
    m.close()


def py(m, code, **kw):
    r = m.run(code, "python", **kw)
    assert not r.get("error"), r
    return r


def get(m, url, **kw):
    return py(m, GET.format(url=url), **kw)["stdout"]


def test_plain_get_urllib_and_curl_warm_and_fresh(warm, fresh, origin):
    check_gets((warm, fresh), origin)


def test_plain_get_in_a_session(warm, origin):
    sid = check_session_get(warm, origin)
    get(warm, f"http://exact.test:{origin}/call")
    # A stateless background job: a sandbox of its own.
    jid = warm.call("job_start", {"lang": "python", "code": GET.format(url=f"http://exact.test:{origin}/job")}
                    )["structuredContent"]["job_id"]
    deadline = time.monotonic() + 120
    while warm.call("job_status", {"job_id": jid})["structuredContent"]["state"] in ("queued", "running"):
        assert time.monotonic() < deadline, "the job did not end"
        time.sleep(0.2)
    # The audit knows which sandbox each connection came from, and whose
    # call, session or job it served then.
    lines = [json.loads(x) for x in warm.audit.read_text().splitlines()]
    whos = {x["sandbox"] for x in lines if x.get("allowed")}
    assert any(w.startswith("a python session's sandbox, client ") and w.endswith(f", session {sid}")
               for w in whos), whos
    assert any(w.startswith("the warm python worker, client ") and w.endswith(", a call") for w in whos), whos
    assert any(w.endswith(f", job {jid}") for w in whos), whos


def test_big_transfers_both_ways_and_at_once(warm, origin):
    """The relay inside buffers and passes back-pressure on: 8 MiB down and
    4 MiB up, eight connections at once, every byte checked."""
    r = py(warm, f"""
import hashlib, threading, urllib.request
n = 8 << 20
want = (b"0123456789abcdef" * (n // 16 + 1))[:n]
got = {{}}
def down(i):
    got[i] = urllib.request.urlopen("http://exact.test:{origin}/big/%d" % n, timeout=60).read() == want
ts = [threading.Thread(target=down, args=(i,)) for i in range(8)]
for t in ts: t.start()
for t in ts: t.join()
up = bytes(range(256)) * (4 << 12)
answer = urllib.request.urlopen(urllib.request.Request("http://exact.test:{origin}/up", data=up), timeout=60).read()
print(sorted(got.values()), answer.decode() == hashlib.sha256(up).hexdigest())
""", timeout_s=120)
    assert r["stdout"].strip() == "[True, True, True, True, True, True, True, True] True", r


def test_sage_oeis_through_the_proxy(warm, tls):
    """The issue's first example: Sage's own oeis() client finds the
    proxy by the variables and gets its answer over HTTPS through CONNECT.
    oeis.org is the test origin here (the test hosts file), on the test
    origin's port: oeis_url is pointed there, the rest is Sage's code."""
    port, _ = tls
    r = warm.run(f"""
import sage.databases.oeis as o
o.oeis_url = "https://oeis.org:{port}/"
print(oeis([1, 1, 2, 5, 14, 42]))
""", "sage", timeout_s=120)
    assert not r.get("error"), r
    assert "0: A000108: Catalan numbers" in r["stdout"], r


def test_https_through_connect(warm, tls):
    port, ca = tls
    r = py(warm, f"""
import ssl, urllib.request
ctx = ssl.create_default_context(cadata={ca!r})
print(urllib.request.urlopen("https://exact.test:{port}/tls", context=ctx, timeout=20).read().decode(), end="")
""")
    assert r["stdout"] == f"hello from origin /tls host=exact.test:{port}\n", r


def test_refused_name_gets_the_one_liner(warm):
    assert get(warm, "http://oeis.org/A000108") == \
        "403 sagebox: oeis.org:80 is not in the network allow-list (setting: network)\n"


def test_ip_literal_not_listed(warm, origin):
    out = get(warm, f"http://127.0.0.2:{origin}/")
    assert out.startswith("403 ") and "127.0.0.2" in out and "not in the network allow-list" in out, out


@pytest.mark.parametrize("url, addr", [("http://loop.test:81/", "127.0.0.1"),
                                       ("http://meta.test/latest/meta-data/", "169.254.169.254")])
def test_listed_name_resolving_to_a_special_address(warm, url, addr):
    out = get(warm, url)
    assert out.startswith("403 sagebox: ") and f"resolves to {addr}" in out, out


def test_redirect_to_a_refused_host(warm, origin):
    out = get(warm, f"http://exact.test:{origin}/redirect")
    assert out == "403 sagebox: refused.test:80 is not in the network allow-list (setting: network)\n", out


REFUSED_QUIETLY = """import urllib.request
try:
    urllib.request.urlopen("http://oeis.org/A000108", timeout=20)
except Exception:
    pass
print("done")
"""


def test_a_refusal_reaches_the_result_from_the_proxy(warm, fresh):
    # The proxy tells the runner what it refused (which sandbox, which host,
    # why): the result carries it, and the model's line, though the code
    # printed nothing of the error.
    for m in (warm, fresh):
        r = m.call("run_python", {"code": REFUSED_QUIETLY})
        s = r["structuredContent"]
        assert s["stdout"] == "done\n", s
        (x,) = s["network_refused"]
        assert (x["host"], x["port"], x["status"]) == ("oeis.org", 80, 403), x
        assert "not in the network allow-list" in x["why"] and "a call" in x["sandbox"], x
        assert "[network] Only these hosts are reachable" in r["content"][0]["text"], r
    # What the code prints is not a refusal, whatever it says.
    r = warm.call("run_python", {"code": "print('oeis.org:80 is not in the network allow-list')"})
    assert "network_refused" not in r["structuredContent"] and "[network]" not in r["content"][0]["text"], r


def test_no_way_around_the_proxy(warm, origin):
    r = py(warm, AROUND + f"""
print(tcp(("127.0.0.1", {origin})), tcp(("10.1.2.3", 80)), udp(("8.8.8.8", 53), q), udp(("127.0.0.53", 53), q),
      udp(("10.1.2.3", 9)))
try:
    socket.getaddrinfo("exact.test", 80); print("RESOLVED")
except OSError:
    print("no resolver")
print(sorted(os.listdir("/run/sagebox-net")), "SAGEBOX_NET_SOCKET" in os.environ)
import glob; print(glob.glob("/tmp/sagebox-net-*"))
""")
    lines = r["stdout"].splitlines()
    tcp_loop, tcp_lan, dns, dns_local, udp_lan = lines[0].split()
    # The host's loopback is not the sandbox's, and Landlock allows the
    # relay's port alone.
    assert tcp_loop in ("ConnectionRefusedError", "PermissionError"), lines
    assert tcp_lan != "CONNECTED" and "ANSWERED" not in (dns, dns_local, udp_lan), lines
    assert lines[1] == "no resolver"
    # Its own socket only; no other sandbox's, no host directory.
    assert lines[2] == "['proxy.sock'] False", lines
    assert lines[3] == "[]"


def test_proxy_variables_and_none(hosts, warm):
    want = "http://127.0.0.1:3128"
    r = py(warm, "import os\nfor k in ('HTTP_PROXY','https_proxy','ALL_PROXY','NO_PROXY'): print(os.environ[k])")
    assert r["stdout"].split() == [want, want, want, "localhost,127.0.0.1"]
    # network = none: no proxy process, no socket, no variables.
    m = server(hosts, "none")
    try:
        r = py(m, "import os\nprint(sorted(k for k in os.environ if 'proxy' in k.lower() or 'SAGEBOX_NET' in k),"
                  " os.path.exists('/run/sagebox-net'))")
        assert r["stdout"] == "[] False\n", r
        assert not proxies_of(sagebox_pid(m))
    finally:
        m.close()


def sagebox_pid(m):
    # unshare and sh exec: the MCP process is sagebox itself.
    return m.proc.pid


def proxies_of(pid):
    out = subprocess.run(["pgrep", "-P", str(pid), "-f", "^sagebox proxy "], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def socket_dir(proxy_pid):
    with open(f"/proc/{proxy_pid}/cmdline") as f:
        argv = f.read().split("\0")
    return argv[argv.index("--socket-dir") + 1]


def test_the_proxy_and_its_sockets_go_with_a_killed_sagebox(hosts, origin, tls):
    m = server(hosts, network(origin, tls[0]))
    try:
        py(m, "print(1)")
        o = m.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
        assert o
        pids = proxies_of(sagebox_pid(m))
        assert len(pids) == 1, pids
        proxy = pids[0]
        with open(f"/proc/{proxy}/status") as f:
            uid = [l.split()[1] for l in f if l.startswith("Uid:")][0]
        assert uid != "0"  # never root
        d = socket_dir(proxy)
        assert glob.glob(d + "/*/proxy.sock")  # a socket per sandbox
        os.kill(sagebox_pid(m), signal.SIGKILL)
        m.proc.wait(timeout=10)
        for _ in range(100):
            if not os.path.exists(f"/proc/{proxy}") and not os.path.exists(d):
                break
            time.sleep(0.1)
        assert not os.path.exists(f"/proc/{proxy}"), "the proxy outlived sagebox"
        assert not os.path.exists(d), os.listdir(d)
    finally:
        m.close()


def test_the_unisolated_backend_refuses_a_list(hosts):
    # the host backend's code has the host's whole network: a list there
    # would promise a limit that does not hold (podman: tests/podman).
    r = subprocess.run([BIN, "run", "--backend", "host", "--network", "oeis.org", "--lang", "python", "-"],
                       input="print(1)", capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "an allow-list cannot hold there" in r.stderr, r


def test_status_and_self_test_show_the_policy_as_enforced(hosts, origin):
    net = f"exact.test:{origin}, 127.0.0.1:{origin}"
    r = subprocess.run(prefix(hosts) + [BIN, "status", "--json", "--network", net], capture_output=True,
                       text=True, timeout=120)
    st = json.loads(r.stdout)
    assert st["network"]["allow"] == net and st["network"]["proxy_running"] is True, st["network"]
    r = subprocess.run(prefix(hosts) + [BIN, "status", "--network", net], capture_output=True, text=True, timeout=120)
    assert "network       only through sagebox's proxy" in r.stdout and "exact.test" in r.stdout, r.stdout
    r = subprocess.run([BIN, "status", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["network"] == {"allow": "none"}
    # self-test: a refused and an allowed connection, tried from inside.
    r = subprocess.run(prefix(hosts) + [BIN, "self-test", "--json", "--network", net], capture_output=True,
                       text=True, timeout=600)
    checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
    refused = checks["network: an unlisted host is refused"]
    allowed = checks["network: a listed host is let through"]
    assert refused["ok"] and " 403 " in refused["detail"], refused
    assert allowed["ok"] and f"CONNECT exact.test:{origin}: HTTP/1.1 200" in allowed["detail"], allowed


def test_proxy_connections_counted_for_prometheus(hosts, origin, tmp_path):
    """The proxy tells the server each connection's outcome and /metrics
    counts them: one relayed, two refused (a host not listed, a listed
    name resolving to the metadata address), one that failed (a listed
    host nothing listens on)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        mport = s.getsockname()[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    net = f"exact.test:{origin}, 127.0.0.1:{origin}, meta.test:80, exact.test:{closed}, 127.0.0.1:{closed}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
    env["XDG_STATE_HOME"] = str(tmp_path)
    p = subprocess.Popen(prefix(hosts) + [BIN, "mcp", "--http", "127.0.0.1:0", "--metrics-listen",
                                          f"127.0.0.1:{mport}", "--network", net],
                         env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        while not (m := re.search(r"serving MCP over HTTP at http://127\.0\.0\.1:(\d+)/mcp", line := p.stderr.readline())):
            assert line, "sagebox mcp --http did not start"
        threading.Thread(target=p.stderr.read, daemon=True).start()
        token = (tmp_path / "sagebox" / "token").read_text().strip()

        def run(code):
            c = http.client.HTTPConnection("127.0.0.1", int(m.group(1)), timeout=120)
            msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "run_python", "arguments": {"code": code},
                              "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                        "io.modelcontextprotocol/clientCapabilities": {}}}}
            c.request("POST", "/mcp", json.dumps(msg), {
                "Content-Type": "application/json", "Accept": "application/json",
                "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call", "Mcp-Name": "run_python"})
            r = json.loads(c.getresponse().read())
            c.close()
            return r["result"]["structuredContent"]["stdout"]

        def counted():
            text = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10).read().decode()
            return {o: float(re.search(rf'^sagebox_proxy_connections_total{{outcome="{o}"}} (\S+)$', text, re.M)[1])
                    for o in ("allowed", "refused", "failed")}

        assert run(GET.format(url=f"http://exact.test:{origin}/counted")).startswith("hello from origin /counted")
        assert run(GET.format(url="http://oeis.org/")).startswith("403 ")
        assert run(GET.format(url="http://meta.test/latest/meta-data/")).startswith("403 ")
        assert run(GET.format(url=f"http://exact.test:{closed}/")).startswith("502 ")
        want = {"allowed": 1, "refused": 2, "failed": 1}
        deadline = time.monotonic() + 10  # the proxy tells closed connections at once, or within a second
        while (got := counted()) != want and time.monotonic() < deadline:
            time.sleep(0.2)
        assert got == want
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=60)


def test_upload_whose_head_and_body_arrive_together_inside(warm, origin):
    # The head and 1 MiB of body in one write, through the relay: the proxy
    # refused it with 400 "the request head is too long" (the head it sends
    # on, with its Host and Connection, did not fit beside the 16 KiB read).
    r = py(warm, f"""
import hashlib, socket
body = bytes(range(256)) * 4096
head = b"POST http://exact.test:{origin}/up HTTP/1.1\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body)
for _ in range(3):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(head + body)
    out = b""
    while x := s.recv(65536):
        out += x
    s.close()
    print(out.split(b" ", 2)[1].decode(), out.split(b"\\r\\n\\r\\n", 1)[1].decode() == hashlib.sha256(body).hexdigest())
""")
    assert r["stdout"] == "200 True\n" * 3, r


def test_the_proxys_answer_reaches_a_client_still_sending(warm, origin):
    # The proxy answers as soon as the head is read; the client is still
    # sending its body. The relay dropped the answer and the client saw a
    # reset: it must get the answer and its reason.
    r = py(warm, f"""
import socket, threading, urllib.request, urllib.error
body = b"x" * (16 << 20)
# a refused host: urllib sends the body, then reads
try:
    urllib.request.urlopen(urllib.request.Request("http://oeis.org/up", data=body), timeout=30)
    print("NOT REFUSED")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode(), end="")
except Exception as e:
    print("FAILED", type(e).__name__, e)
# a bad request (its Host names another host), read while the body still goes
s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
head = b"POST http://exact.test:{origin}/up HTTP/1.1\\r\\nHost: evil.test\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body)
def send():
    try:
        s.sendall(head + body)
    except OSError:
        pass
t = threading.Thread(target=send)
t.start()
out = b""
try:
    while x := s.recv(65536):
        out += x
except OSError as e:
    out += b" FAILED " + type(e).__name__.encode()
t.join()
print(out.split(b"\\r\\n", 1)[0].decode(), "|", out.split(b"\\r\\n\\r\\n", 1)[-1].decode(), end="")
""", timeout_s=120)
    assert r["stdout"] == ("403 sagebox: oeis.org:80 is not in the network allow-list (setting: network)\n"
                           "HTTP/1.1 400 Bad Request | sagebox: bad proxy request: the Host header and the "
                           "requested host disagree\n"), r


def gone(proxy, d):
    for _ in range(100):
        if not os.path.exists(f"/proc/{proxy}") and not os.path.exists(d):
            break
        time.sleep(0.1)
    left = glob.glob(d + "/*") + glob.glob(d + "/*/*") if os.path.exists(d) else None
    shutil.rmtree(d, ignore_errors=True)  # (a failed try leaves no litter for the next test)
    assert not os.path.exists(f"/proc/{proxy}"), "the proxy outlived sagebox"
    assert left is None, (d, left)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_sageboxs_process_group_leaves_no_socket(hosts, origin, sig):
    # systemd's stop, a Ctrl-C, a closed terminal: the signal reaches the
    # proxy as well as sagebox. The proxy died at once and left
    # TMPDIR/sagebox-net-XXXXXX/ID/proxy.sock (15 tries of 15). Five tries
    # a signal: three of `sagebox run` while its code runs, two of `sagebox
    # mcp` with a warm worker's and a session's socket.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_") or k == "SAGEBOX_BIN"}
    net = f"exact.test:{origin}"
    for _ in range(3):
        p = subprocess.Popen([BIN, "run", "--network", net, "--lang", "python", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
        try:
            p.stdin.write(b"import time\ntime.sleep(60)\n")
            p.stdin.close()
            for _ in range(600):  # the proxy, and the sandbox's socket (the code's output comes at its end)
                pids = proxies_of(p.pid)
                if pids and glob.glob(socket_dir(pids[0]) + "/*/proxy.sock"):
                    break
                assert p.poll() is None, p.stderr.read()
                time.sleep(0.1)
            assert len(pids) == 1, pids
            d = socket_dir(pids[0])
            time.sleep(1)
            os.killpg(p.pid, sig)
            p.wait(timeout=60)
            gone(pids[0], d)
        finally:
            p.kill()
            p.wait()
    for _ in range(2):
        m = MCP(BIN, ["--network", net], prefix=["setsid"], env=env)
        try:
            py(m, "print(1)")
            m.call("session_open", {"lang": "python"})
            pids = proxies_of(sagebox_pid(m))
            assert len(pids) == 1, pids
            d = socket_dir(pids[0])
            assert len(glob.glob(d + "/*/proxy.sock")) >= 2
            os.killpg(sagebox_pid(m), sig)
            m.proc.wait(timeout=60)
            gone(pids[0], d)
        finally:
            m.close()
