"""The rootless Podman backend (and its Docker variant), against real podman.

Each test checks behaviour from inside the container or through podman
itself; the autouse fixture in conftest.py checks after every test that
`podman ps -a` shows no container with our label.
"""
import errno
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import (DOCKER, IMAGE, NET_MOUNT, NETWORK, PACKAGES_MOUNT, SAGEBOX, USER, as_user, as_user_argv,
                      cmdline, descendants, environ_of, ours, podman, run_code, status, wait_for)

ALLOWED_ENV = {
    "PATH", "HOME", "DOT_SAGE", "LANG", "LC_ALL", "TERM", "TMPDIR", "SAGE_NUM_THREADS",
    "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONNOUSERSITE",
    "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "MPLBACKEND",
    "HOSTNAME",  # set by the runtime to the container's own name
    "SYMPOW_PKGCACHEDIR",  # set by the driver: sympow's cache under $DOT_SAGE
}
# With a network list (the podman-network suite), also the proxy's
# variables (sandbox.c) and pip's (the driver's pipenv.py): none is a secret.
NET_ENV = {
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy",
    "SAGEBOX_NET_SOCKET", "PYTHONUSERBASE", "PIP_USER", "PIP_BREAK_SYSTEM_PACKAGES", "PIP_CACHE_DIR",
    "PIP_NO_INPUT", "PIP_PROGRESS_BAR", "PIP_DISABLE_PIP_VERSION_CHECK", "PIP_RETRIES", "PIP_ROOT_USER_ACTION",
}
SECRETS = {"SAGEBOX_TEST_SECRET": "s3cr3t-value-123", "OPENAI_API_KEY": "sk-test-456",
           "AWS_SECRET_ACCESS_KEY": "aws-789"}

PROBE = r"""
import errno, json, os, resource, socket
r = {}
r["uid"], r["euid"], r["gid"] = os.getuid(), os.geteuid(), os.getgid()
st = {}
for line in open("/proc/self/status").read().splitlines():
    k, _, v = line.partition(":")
    st[k] = v.strip()
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
    r[k] = st.get(k)
r["net"] = sorted(n for _, n in socket.if_nameindex())
try:
    socket.create_connection(("151.101.2.132", 80), timeout=3).close()
    r["connect"] = "connected"
except OSError as e:
    r["connect"] = e.errno
try:
    socket.getaddrinfo("deb.debian.org", 80)
    r["dns"] = "resolved"
except OSError as e:
    r["dns"] = str(e)
# a DNS query for deb.debian.org straight to a public resolver
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(3)
try:
    u.sendto(bytes.fromhex("123401000001000000000000036465620664656269616e036f72670000010001"), ("8.8.8.8", 53))
    u.recvfrom(512)
    r["udp"] = "answered"
except OSError as e:
    r["udp"] = e.errno if e.errno else type(e).__name__
# the proxy's socket directory, with a network list: read-only, not listable
r["netdir"] = {}
for p in ("/run/sagebox-net/planted", "/run/sagebox-net/proxy.sock"):
    try:
        os.unlink(p)
        r["netdir"][p] = "removed"
    except OSError as e:
        r["netdir"][p] = e.errno
try:
    r["netdir"]["list"] = os.listdir("/run/sagebox-net")
except OSError as e:
    r["netdir"]["list"] = e.errno
r["writes"] = {}
for p in ("/etc/sagebox-probe", "/usr/bin/sagebox-probe", "/sagebox-probe", "/home/sage/probe", "/var/tmp/probe"):
    try:
        open(p, "w").close()
        r["writes"][p] = "written"
    except OSError as e:
        r["writes"][p] = e.errno
r["cwd"] = os.getcwd()
open("probe.txt", "w").write("ok")
open("/tmp/probe.txt", "w").write("ok")
r["cwd_writable"] = open("probe.txt").read() == "ok"
r["env"] = sorted(os.environ)
r["environ_values"] = "\n".join(os.environ.values())
r["mountpoints"] = {l.split()[4]: l.split()[5] for l in open("/proc/self/mountinfo")}
r["rl"] = {n: resource.getrlimit(getattr(resource, n)) for n in
           ("RLIMIT_DATA", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_CORE")}
sv = os.statvfs("/tmp")
r["tmp_size"] = sv.f_blocks * sv.f_frsize
sv = os.statvfs(".")
r["work_size"] = sv.f_blocks * sv.f_frsize
import ctypes
pid = os.fork()
if pid == 0:
    os._exit(7)
r["fork"] = os.waitpid(pid, 0)[1] >> 8
# namespace calls in a child: where they succeed they change the caller
rfd, wfd = os.pipe()
pid = os.fork()
if pid == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    for name, flag in (("user", 0x10000000), ("mount", 0x20000), ("net", 0x40000000)):
        out[name] = 0 if libc.unshare(flag) == 0 else ctypes.get_errno()
    out["ptrace"] = 0 if libc.ptrace(0, 0, 0, 0) == 0 else ctypes.get_errno()
    os.write(wfd, json.dumps(out).encode())
    os._exit(0)
os.close(wfd)
ns = json.loads(os.read(rfd, 65536))
os.waitpid(pid, 0)
r["ptrace"] = ns.pop("ptrace")
r["unshare"] = ns
try:
    r["shadow"] = open("/etc/shadow").read()[:10]
except OSError as e:
    r["shadow"] = e.errno
print(json.dumps(r))
"""


def probe(args=(), extra_env=None, backend="podman"):
    res, p = run_code(PROBE, args=args, extra_env=extra_env, backend=backend)
    assert res is not None, p.stderr.decode()
    assert res["ok"], res
    return json.loads(res["stdout"]), res


# ---------------------------------------------------------------- status


def test_status_reports_engine_image_and_limits(cgroup_version):
    st, p = status()
    b = st["backend"]
    assert b["available"] is True, b
    eng = b["enforced"]["engine"]
    assert eng["name"] == "podman"
    assert eng["version"] and eng["version"][0].isdigit()
    assert eng["rootless"] is True
    assert eng["oci_runtime"] == "runc"
    assert eng["storage_driver"] == "overlay"
    assert eng["cgroup_version"] == int(cgroup_version.lstrip("v"))
    img = b["enforced"]["image"]
    assert img["present"] is True
    assert img["digest"].startswith("sha256:")
    # a tag is not pinned: status says how to pin it
    assert img["pinned"] is False
    assert "@sha256:" in img["pin_hint"] or img["id"] in img["pin_hint"]


def test_status_text_is_a_verdict_with_the_limits_the_report_claims():
    st, _ = status()
    p = as_user([SAGEBOX, "status", "--backend", "podman", "--image", IMAGE])
    text = p.stdout.decode()
    assert p.returncode == 0, text + p.stderr.decode()
    assert text.startswith("sagebox: the sandbox works here: podman backend, "), text
    on = text.partition("\nEnforced:\n")[2].split("\n\n")[0]
    off = text.partition("\nNot enforced:\n")[2].split("\n\n")[0]
    assert "code runs as " in on and "rootless container" in on and "network       none" in on
    for name, lim in st["backend"]["enforced"]["limits"].items():
        if lim["enforced"]:
            assert lim["enforced_by"] in " ".join(on.split()), (name, on)
        else:
            assert lim["note"].split(";")[0] in " ".join(off.split()), (name, off)
    assert "podman " + st["backend"]["engine"]["version"] + ", rootless" in text


def test_status_pinned_digest_image_is_not_flagged():
    st, _ = status()
    hint = st["backend"]["enforced"]["image"]["pin_hint"]
    pinned = hint.split("image = ")[-1].strip()
    st2, _ = status(image=pinned)
    img = st2["backend"]["enforced"]["image"]
    assert img["present"] is True, st2
    assert img["pinned"] is True
    assert "pin_hint" not in img


def test_limits_reported_honestly(cgroup_version):
    st, _ = status()
    lim = st["backend"]["enforced"]["limits"]
    if cgroup_version == "v1":
        # rootless podman ignores --memory/--pids-limit/--cpus on v1: never claimed
        assert "RLIMIT_DATA" in lim["memory"]["enforced_by"]
        assert "cgroup" not in lim["memory"]["enforced_by"]
        assert "RLIMIT_NPROC" in lim["pids"]["enforced_by"]
        assert lim["cpus"]["enforced"] is False
        assert "enforced_by" not in lim["cpus"]
        assert any("cgroups V1" in w for w in st["backend"]["enforced"]["warnings"])
    else:
        assert "cgroup" in lim["memory"]["enforced_by"]


# ---------------------------------------------------------------- runs


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_python_runs_and_reports_backend(isolation):
    res, p = run_code("print(6 * 7)", args=("--isolation", isolation))
    assert res["ok"], res
    assert res["stdout"].strip() == "42"
    sb = res["sandbox"]
    assert sb["backend"] == "podman"
    assert sb["network"] == "none" and sb["capabilities"] == "none"
    assert sb["user"].endswith("group of sage") and sb["rootless"] is True
    assert sb["container"]["name"].startswith("sagebox-")


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_the_job_is_the_oom_killers_first_choice(isolation):
    """confine.prefer_oom_kill in the container too (natively:
    tests/warm/test_oom_score.py)."""
    res, p = run_code("print(open('/proc/self/oom_score_adj').read().strip())", args=("--isolation", isolation))
    assert res and res["ok"], (res, p.stderr)
    assert res["stdout"] == "1000\n", res


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_figures_from_the_container(isolation):
    # a Sage plot and a matplotlib figure, saved by sagebox run (as the
    # test user, in a directory it can write) and decoded here
    import shutil
    import tempfile
    from PIL import Image
    tmp_path = tempfile.mkdtemp(prefix="sagebox-figures-")
    os.chmod(tmp_path, 0o777)
    try:
        _figures_from_the_container(isolation, tmp_path, Image)
    finally:
        shutil.rmtree(tmp_path)


def _figures_from_the_container(isolation, tmp_path, Image):
    # fresh: Python (a fresh Sage in a container takes too long for a lean
    # suite; warm shows a Sage plot)
    mpl = "import matplotlib.pyplot as plt\nplt.figure(figsize=(40, 10))\nplt.plot([1, 2])\n"
    lang, code, n = ("python", mpl, 1) if isolation == "fresh" else \
        ("sage", "p = plot(sin(x), (x, 0, 1))\np.show()\n" + mpl, 2)
    res, p = run_code(code, lang=lang, args=("--isolation", isolation, "--timeout", "120", "--figures", tmp_path))
    assert res and res["ok"], (res, p.stderr)
    assert [f["saved_path"] for f in res["figures"]] == [f"{tmp_path}/figure-{i}.png" for i in range(1, n + 1)]
    for f in res["figures"]:
        img = Image.open(f["saved_path"])
        img.load()
        assert img.size == (f["width"], f["height"]) and max(img.size) <= 1024
        assert os.path.getsize(f["saved_path"]) == f["bytes"]
    assert (res["figures"][-1]["width"], res["figures"][-1]["height"]) == (1024, 256)


def test_sage_factor_in_container():
    res, p = run_code("R.<x> = QQ[]\nprint(factor(x^4 - 1))\n", lang="sage", args=("--memory", "1g"),
                      timeout=600)
    assert res["ok"], res
    assert "(x - 1) * (x + 1) * (x^2 + 1)" in res["stdout"]


def test_shell_job():
    res, p = run_code("echo hi from $(id -un); pwd", lang="shell")
    assert res["ok"], res
    assert res["stdout"].split() == ["hi", "from", "sage", "/tmp/work"]


def test_inside_the_container():
    r, res = probe()
    # not root, no capabilities, no-new-privs, seccomp filter on
    # a uid of its own per container (per-uid counts are not shared), sage's group
    assert r["uid"] != 0 and r["euid"] != 0 and 20000 <= r["uid"] < 60000 and r["gid"] == 1000
    assert int(r["CapEff"], 16) == 0 and int(r["CapPrm"], 16) == 0
    assert int(r["CapBnd"], 16) == 0 and int(r["CapAmb"], 16) == 0
    assert r["NoNewPrivs"] == "1"
    assert r["Seccomp"] == "2"
    # no network at all: only loopback, nothing routes, no DNS (the same
    # with a network list: the proxy, outside, is the only way out)
    assert r["net"] == ["lo"]
    assert r["connect"] in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ECONNREFUSED, errno.EACCES)
    assert r["dns"] != "resolved"
    assert r["udp"] in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EACCES, errno.EPERM), r["udp"]
    # read-only root; only the tmpfs are writable
    for path, e in r["writes"].items():
        assert e in (errno.EROFS, errno.EACCES, errno.ENOENT), (path, e)
    assert r["cwd"] == "/tmp/work" and r["cwd_writable"]
    assert r["shadow"] in (errno.EACCES, errno.ENOENT)
    # stricter seccomp than the engine's default: no new namespaces, no ptrace; fork works
    assert all(e != 0 for e in r["unshare"].values()), r["unshare"]
    assert r["ptrace"] != 0 and r["fork"] == 7
    # no host directory is mounted; with a network list, the sandbox's own
    # proxy socket directory, read-only: nothing in it can be removed or
    # replaced, and it cannot be listed (0711: enter, not list)
    allowed = {"/", "/tmp", "/tmp/work", "/etc/hosts", "/etc/hostname", "/etc/passwd", "/run/.containerenv"}
    if NETWORK:
        assert "ro" in r["mountpoints"].pop(NET_MOUNT).split(","), r["mountpoints"]
        assert r["netdir"] == {NET_MOUNT + "/planted": errno.EROFS, NET_MOUNT + "/proxy.sock": errno.EROFS,
                               "list": errno.EACCES}, r["netdir"]
    # and the user's packages directory (`sagebox mcp` makes it), read-only
    if PACKAGES_MOUNT in r["mountpoints"]:
        assert "ro" in r["mountpoints"].pop(PACKAGES_MOUNT).split(","), r["mountpoints"]
    for mp in r["mountpoints"]:
        assert mp in allowed or mp.startswith(("/proc", "/dev", "/sys")), mp
    # rlimits of the seed
    assert r["rl"]["RLIMIT_NOFILE"] == [1024, 1024]
    assert r["rl"]["RLIMIT_FSIZE"] == [128 << 20, 128 << 20]
    assert r["rl"]["RLIMIT_NPROC"] == [96, 96]
    assert r["rl"]["RLIMIT_CORE"] == [0, 0]
    assert r["tmp_size"] == 256 << 20 and r["work_size"] == 256 << 20


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_socket_families_inside_the_container(isolation):
    # The engine's default profile allows every family but AF_NETLINK's
    # audit protocol (AF_VSOCK too: a way to the hypervisor around the
    # proxy and --network=none); the policy table's allow-list holds here
    # as in native (tests/lib/socket_families.py).
    import socket_families
    res, p = run_code(socket_families.CODE, args=["--isolation", isolation])
    assert res and res["exit_code"] == 0, (p.stdout[-2000:], p.stderr[-2000:])
    assert socket_families.result(res["stdout"]) == socket_families.EXPECTED


def test_every_seed_flag_on_the_podman_command_line(cgroup_version):
    """Inspect a sleeping job: the podman client's argv and environment, and
    podman inspect of the container."""
    code = "import time\nprint('sleeping', flush=True)\ntime.sleep(120)\n"
    env = dict(SECRETS)
    proc = subprocess.Popen(as_user_argv([SAGEBOX, "run", "--json", "--lang", "python", "--backend",
                                          "podman", "--image", IMAGE, "--timeout", "15", "-"], env),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(code.encode())
    proc.stdin.close()
    try:
        names = wait_for(lambda: [n for n in ours()
                                  if podman("inspect", "--format", "{{.State.Running}}", n).stdout.strip() == b"true"],
                         timeout=60)
        assert names, "no running container of ours appeared"
        name = names[0]
        client = [p for p in descendants(proc.pid) if "run" in cmdline(p)[:4] and os.path.basename(cmdline(p)[0]) == "podman"]
        assert client, [cmdline(p) for p in descendants(proc.pid)]
        argv = cmdline(client[0])
        joined = " ".join(argv)
        for flag in ("--rm", "-i", "--pull=never", "--network=none", "--read-only", "--cap-drop=all",
                     "--label sagebox=1", "--security-opt no-new-privileges",
                     "--ulimit nofile=1024:1024", "--ulimit nproc=96:96",
                     "--ulimit fsize=134217728:134217728", "--workdir /tmp/work",
                     "--env HOME=/tmp/home", "--env DOT_SAGE=/tmp/dot-sage", "--env SAGE_NUM_THREADS=1",
                     "--env OPENBLAS_NUM_THREADS=1", "--env OMP_NUM_THREADS=1",
                     "--env MKL_NUM_THREADS=1", "--env PYTHONNOUSERSITE=1",
                     f"--name {name}", "--entrypoint /usr/bin/python3", "--log-driver=none"):
            assert flag in joined, flag
        assert "--tmpfs /tmp:rw,nosuid,nodev,size=268435456,mode=1777" in joined
        # a uid of its own, sage's group; the per-user counts it may hold
        user = argv[argv.index("--user") + 1]
        assert re.fullmatch(r"[0-9]+:sage", user) and 20000 <= int(user.split(":")[0]) < 60000, user
        for flag in ("--ulimit sigpending=128:128", "--ulimit msgqueue=0:0", "--ulimit memlock=65536:65536",
                     "--cgroupns=private", "--hostname sagebox", "--security-opt mask=/sys:/proc/kallsyms",
                     "--no-hosts"):
            assert flag in joined, flag
        assert "--label sagebox.owner=" in joined
        if cgroup_version == "v2":
            for flag in ("--pids-limit 96", "--memory 256m", "--cpus 1"):
                assert flag in joined, flag
        else:
            # the flags rootless podman would ignore are not passed; the rlimit fallback is
            assert "--memory" not in argv and "--pids-limit" not in argv and "--cpus" not in argv
            assert "--ulimit data=" in joined
        # the image name goes after "--": it cannot be read as an option
        assert argv[argv.index("--") - 2] == "--entrypoint"
        # the environment podman gets is the seed's allow-list, no secret
        env_keys = {e.split("=", 1)[0] for e in environ_of(client[0])}
        assert env_keys <= {"PATH", "HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "TMPDIR"}, env_keys
        assert not any(v in "\n".join(environ_of(client[0])) for v in SECRETS.values())
        # podman's own view of the container
        info = json.loads(podman("inspect", name).stdout)[0]
        hc, cfg = info["HostConfig"], info["Config"]
        assert hc["NetworkMode"] == "none"
        assert hc["ReadonlyRootfs"] is True
        assert "no-new-privileges" in hc["SecurityOpt"]
        assert hc["CapAdd"] in (None, [])
        assert cfg["User"] == user
        assert cfg["Labels"]["sagebox"] == "1" and cfg["Labels"]["sagebox.owner"]
        assert "/tmp" in hc["Tmpfs"] and "/tmp/work" in hc["Tmpfs"]
        # The host directories, each read-only: the user's packages directory
        # (`sagebox mcp` makes it) and, with a network list, the sandbox's own
        # proxy socket directory; nothing else.
        binds = []
        p = re.search(r"--mount type=bind,source=(\S+),target=%s,readonly=true" % PACKAGES_MOUNT, joined)
        if p:
            assert p.group(1).endswith("/.local/share/sagebox/site-packages"), joined
            binds.append(("bind", p.group(1), PACKAGES_MOUNT, False))
        if NETWORK:
            m = re.search(r"--mount type=bind,source=(\S+),target=/run/sagebox-net,readonly=true", joined)
            assert m and re.fullmatch(r"/\S*/sagebox-net-\w{6}/[0-9]+", m.group(1)), joined
            binds.append(("bind", m.group(1), NET_MOUNT, False))
        assert joined.count("--mount ") == len(binds) and "--volume" not in joined, joined
        assert sorted((b["Type"], b["Source"], b["Destination"], b["RW"]) for b in info["Mounts"] or []) == \
            sorted(binds), info["Mounts"]
        assert all(any(b.startswith(f"{x[1]}:{x[2]}:") for x in binds) for b in hc.get("Binds") or []), hc["Binds"]
        assert not any(v in " ".join(cfg["Env"]) for v in SECRETS.values())
        # the code arrived on stdin: it is nowhere in the container's config
        assert "time.sleep(120)" not in json.dumps(info)
    finally:
        proc.wait(timeout=120)  # it times out after 15 s
    assert json.loads(proc.stdout.read())["timed_out"] is True
    assert not ours()


def test_env_scrubbed_inside():
    r, _ = probe(extra_env=SECRETS)
    allowed = ALLOWED_ENV | NET_ENV if NETWORK else ALLOWED_ENV
    assert set(r["env"]) <= allowed, set(r["env"]) - allowed
    for v in SECRETS.values():
        assert v not in r["environ_values"]


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_timeout_kills_and_removes_container(isolation):
    t0 = time.monotonic()
    res, p = run_code("while True:\n    pass\n", args=("--timeout", "3", "--isolation", isolation))
    took = time.monotonic() - t0
    assert res["timed_out"] is True, res
    assert not res["ok"]
    assert took < 3 + 20, took
    assert ours() == []


def test_timeout_kills_setsid_double_forked_grandchild():
    code = ("import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(300)\n"
            "    os._exit(0)\n"
            "time.sleep(300)\n")
    res, _ = run_code(code, args=("--timeout", "3"))
    assert res["timed_out"] is True
    # the container (with everything in its pid namespace) is gone
    assert ours() == []
    r = as_user(["pgrep", "-u", "100999", "-f", "python3"])
    assert r.stdout.strip() == b"", r.stdout


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_output_overflow_kills_and_removes(isolation):
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n    sys.stdout.flush()\n"
    t0 = time.monotonic()
    res, _ = run_code(code, args=("--output-limit-kib", "16", "--timeout", "60", "--isolation", isolation))
    assert res["output_limit_exceeded"] is True, res
    assert res["truncated"]["stdout"] is True
    assert time.monotonic() - t0 < 40
    assert ours() == []


def test_fork_bomb_is_contained():
    code = ("import os, time\n"
            "n = 0\n"
            "try:\n"
            "    while True:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(60)\n"
            "            os._exit(0)\n"
            "        n += 1\n"
            "except OSError as e:\n"
            "    print('stopped', n, e.errno, flush=True)\n")
    res, _ = run_code(code, args=("--timeout", "10"))
    out = res["stdout"].split()
    assert out[0] == "stopped", res
    assert int(out[1]) < 96 and int(out[2]) == errno.EAGAIN


def test_memory_limit_applies(cgroup_version):
    code = ("try:\n"
            "    b = bytearray(600 << 20)\n"
            "    print('allocated')\n"
            "except MemoryError:\n"
            "    print('refused')\n")
    res, _ = run_code(code, args=("--memory", "512m"))
    if cgroup_version == "v1":
        # RLIMIT_DATA refuses it up front
        assert res["stdout"].strip() == "refused", res
    else:
        # the memory cgroup kills it
        assert res["stdout"].strip() != "allocated" or not res["ok"]
    assert ours() == []


def test_disk_fill_is_bounded():
    code = ("import errno\n"
            "try:\n"
            "    with open('/tmp/big', 'wb') as f:\n"
            "        for i in range(400):\n"
            "            f.write(b'x' * (1 << 20))\n"
            "    print('wrote all')\n"
            "except OSError as e:\n"
            "    print('stopped', e.errno)\n")
    res, _ = run_code(code, args=("--timeout", "60"))
    # fsize (128 MiB) stops it first: SIGXFSZ is ignored by Python -> EFBIG
    assert res["stdout"].split()[0] == "stopped", res
    assert int(res["stdout"].split()[1]) in (errno.EFBIG, errno.ENOSPC)


@pytest.mark.parametrize("isolation", ["fresh", "warm"])
def test_sigkill_of_sagebox_then_next_start_cleans_up(isolation):
    code = "import time\nprint('up', flush=True)\ntime.sleep(300)\n"
    proc = subprocess.Popen(as_user_argv([SAGEBOX, "run", "--lang", "python", "--backend", "podman",
                                          "--isolation", isolation, "--image", IMAGE, "--timeout", "300", "-"]),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(code.encode())
    proc.stdin.close()
    names = wait_for(lambda: [n for n in ours()
                              if podman("inspect", "--format", "{{.State.Running}}", n).stdout.strip() == b"true"],
                     timeout=60)
    assert len(names) == 1
    time.sleep(2)  # the job is running inside
    sb = [p for p in descendants(proc.pid) if os.path.basename(cmdline(p)[0]) == "sagebox"]
    assert sb, [cmdline(p) for p in descendants(proc.pid)]
    os.kill(sb[0], signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(1)
    if isolation == "fresh":
        # the code already had its stdin: nothing stops it, and the dead
        # sagebox could not clean up, so its container is still there
        assert ours() == names
    # the next start of a podman-backed sagebox removes whatever is left
    st, _ = status()
    if isolation == "fresh":
        assert st["backend"]["orphans_removed"] == 1
    assert ours() == []
    # the podman client the dead sagebox left behind ends with its container
    assert wait_for(lambda: not [p for p in descendants(1) if names[0] in " ".join(cmdline(p))], timeout=30)


def test_cleanup_leaves_a_live_sageboxs_container_alone():
    live = subprocess.Popen(as_user_argv([SAGEBOX, "run", "--lang", "python", "--backend", "podman",
                                          "--image", IMAGE, "--timeout", "30", "-"]),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    live.stdin.write(b"import time\ntime.sleep(8)\nprint('live done')\n")
    live.stdin.close()
    names = wait_for(ours, timeout=60)
    assert len(names) == 1
    # another sagebox starts and cleans up: the live one's container stays
    st, _ = status()
    assert st["backend"]["orphans_removed"] == 0
    assert ours() == names
    live.wait(timeout=120)
    assert b"live done" in live.stdout.read()
    assert ours() == []


def test_image_missing_is_explained_and_never_pulled():
    img = "localhost/sagebox-no-such-image:1"
    before = podman("images", "-q").stdout
    res, p = run_code("print(1)", image=img)
    assert p.returncode == 125, p
    assert res["ok"] is False
    msg = res["error"] + " " + res.get("hint", "")
    assert "not present" in msg and "never pulls" in msg
    assert f"podman pull {img}" in msg
    assert "sagebox image build" in msg
    assert podman("image", "exists", img).returncode == 1
    assert podman("images", "-q").stdout == before
    ev = podman("events", "--stream=false", "--since", "5m", "--filter", "event=pull", "--format", "{{.Name}}")
    assert img.encode() not in ev.stdout
    st, _ = status(image=img)
    b = st["backend"]
    assert b["available"] is False
    assert b["enforced"]["image"]["pull_command"] == f"podman pull {img}"
    assert "sagebox image build" in b["enforced"]["image"]["build_command"]


@pytest.mark.parametrize("bad", ["-v", "--privileged", "a b", "img\tx", "img\x01"])
def test_bad_image_names_refused(bad):
    p = as_user([SAGEBOX, "run", "--lang", "python", "--backend", "podman", "--image", bad, "-"],
                input=b"print(1)")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "image" in err and ("-" in err or "whitespace" in err or "control" in err), err
    assert ours() == []


def test_root_container_user_refused():
    res, p = run_code("print(1)", args=("--container-user", "root"))
    assert res["ok"] is False
    assert "root" in res["error"]


def test_rootful_podman_refused():
    """As root, podman reports rootless=false: sagebox refuses to run."""
    before = subprocess.run(["podman", "--log-level=error", "ps", "-aq"], capture_output=True).stdout
    p = subprocess.run([SAGEBOX, "run", "--json", "--lang", "python", "--backend", "podman", "--image",
                        IMAGE, "-"], input=b"print(1)", capture_output=True, timeout=120)
    res = json.loads(p.stdout)
    assert res["ok"] is False and p.returncode == 125
    assert "rootless=false" in res["error"]
    assert "not as root" in res["hint"] and "{{.Host.Security.Rootless}}" in res["hint"]
    after = subprocess.run(["podman", "--log-level=error", "ps", "-aq"], capture_output=True).stdout
    assert before == after


def test_podman_executable_missing():
    res, p = run_code("print(1)", args=("--podman", "/nonexistent/podman"))
    assert res["ok"] is False
    assert "not found" in res["error"] or "/nonexistent/podman" in res["error"]


def test_self_test_podman():
    p = as_user([SAGEBOX, "self-test", "--json", "--backend", "podman", "--image", IMAGE, "--memory", "1g"],
                timeout=600)
    res = json.loads(p.stdout)
    assert res["backend"] == "podman", res
    checks = {c["name"]: c for c in res["checks"]}
    # what the issue asks the self-test to verify from inside the container
    for name in ("sage factor(x^4 - 1)", "uid is not root", "no capabilities", "no_new_privs",
                 "seccomp filter", "no network", "system read-only", "/tmp writable",
                 "memory limit enforced"):
        assert checks[name]["ok"], checks[name]
    # refused by sagebox's seccomp profile (TIOCSTI: there is no terminal at all, ENOTTY)
    assert "unshare(CLONE_NEWUSER): EPERM" in checks["namespace and TIOCSTI calls refused"]["detail"]
    assert "(x - 1) * (x + 1) * (x^2 + 1)" in json.dumps(res["factor"])


# ---------------------------------------------------------------- docker


def test_docker_variant_runs_and_cleans_up(docker_socket):
    res, p = run_code("import os\nprint('uid', os.getuid())\n", backend="docker",
                      args=("--podman", DOCKER), extra_env=docker_socket)
    assert res is not None, p.stderr
    assert res["ok"], res
    assert res["stdout"].split() == ["uid", "1000"]
    eng = res["sandbox"]["engine"]
    assert res["sandbox"]["backend"] == "docker" and eng["name"] == "docker"
    assert eng["rootless"] is True
    assert ours("docker", docker_socket) == [] and ours() == []


def test_docker_variant_inside(docker_socket):
    r, res = probe(args=("--podman", DOCKER), extra_env=dict(docker_socket, **SECRETS), backend="docker")
    assert r["uid"] == 1000 and int(r["CapEff"], 16) == 0 and r["NoNewPrivs"] == "1"
    if res["sandbox"]["seccomp"].startswith("sagebox's"):
        assert all(e != 0 for e in r["unshare"].values()), r["unshare"]
    else:
        # podman's Docker API cannot take our profile from the docker CLI: said, not hidden
        assert any("seccomp profile" in w for w in res["sandbox"]["warnings"])
    assert r["net"] == ["lo"]
    assert r["cwd"] == "/tmp/work" and r["cwd_writable"]
    for v in SECRETS.values():
        assert v not in r["environ_values"]


def test_docker_variant_timeout_removes(docker_socket):
    res, _ = run_code("while True:\n    pass\n", backend="docker", args=("--podman", DOCKER, "--timeout", "3"),
                      extra_env=docker_socket)
    assert res["timed_out"] is True, res
    assert ours("docker", docker_socket) == [] and ours() == []


def test_docker_rootful_endpoint_refused(docker_socket):
    """A Docker endpoint that is not this user's rootless daemon is refused
    (here: root's podman socket, as root)."""
    sock = "/run/podman/podman.sock"
    os.makedirs(os.path.dirname(sock), exist_ok=True)
    svc = subprocess.Popen(["podman", "--log-level=error", "system", "service", "--time=0", f"unix://{sock}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        env = {"DOCKER_HOST": f"unix://{sock}"}
        ok = wait_for(lambda: subprocess.run([DOCKER, "version"], env=dict(os.environ, **env),
                                             capture_output=True).returncode == 0, timeout=30, step=0.5)
        assert ok
        p = subprocess.run([SAGEBOX, "run", "--json", "--lang", "python", "--backend", "docker", "--podman",
                            DOCKER, "--image", IMAGE, "-"], input=b"print(1)", capture_output=True,
                           env=dict(os.environ, **env), timeout=120)
        res = json.loads(p.stdout)
        assert res["ok"] is False
        assert "not confirmed to be rootless" in res["error"], res
    finally:
        svc.terminate()
        svc.wait(timeout=30)


def test_repl_syntax_and_sympow_cache_in_the_container():
    # IPython/Sage REPL syntax runs in the container's driver too
    # (its IPython's transformer), and sympow's cache is the container's own
    res, p = run_code("%time f = factor(2^128+1)\n!echo hi\nprint(EllipticCurve('11a').modular_degree())\n"
                      "%display latex\nx^2/3\n", lang="sage", args=("--memory", "1g"))
    assert res is not None and res["exit_code"] == 0, p
    out = res["stdout"].splitlines()
    assert out[0].startswith("CPU times: user ") and out[1].startswith("Wall time: "), res
    assert out[2:] == ["hi", "1"], res
    # the value under %display latex is a LaTeX display item
    assert res["display"] == [{"kind": "latex", "latex": "\\frac{1}{3} \\, x^{2}"}], res
    assert "WARNING" not in res["stderr"], res
