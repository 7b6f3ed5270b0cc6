"""Helpers for the Podman/Docker backend tests.

Everything is real: rootless podman as the unprivileged user sagebox-test
(prepared by scripts/podman-test-setup), the image built by `sagebox image
build`, the Docker CLI against podman's Docker API socket. Nothing is mocked.
Run as root (the tests switch to the test user with runuser, and one test
checks that root's rootful podman is refused).
"""
import json
import os
import pwd
import subprocess
import time

import pytest
from hostproc import children
from shared_binary import shared_copy

USER = os.environ.get("SB_TEST_USER", "sagebox-test")
IMAGE = os.environ.get("SB_TEST_IMAGE", "localhost/sagebox-sage:deb12-pip")
DOCKER = os.environ.get("SB_TEST_DOCKER", "/usr/local/bin/docker")
# The podman-network suite (tests/podman/meson.build) runs the break-out
# checks again with a network list set, as sandbox-network does for the
# native sandbox: every sagebox the test user starts gets it (and a native
# one started as root inherits it).
NETWORK = os.environ.get("SAGEBOX_NETWORK", "none") != "none"
NET_MOUNT = "/run/sagebox-net"
PACKAGES_MOUNT = "/opt/sagebox/site-packages"  # src/core/paths.h: the user's packages, read-only
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _find_sagebox():
    for p in (os.environ.get("SAGEBOX_BIN"), os.environ.get("SAGEBOX"),
              os.path.join(ROOT, "build", "sagebox"),
              os.path.join(ROOT, "build-podman", "sagebox")):
        if p and os.access(p, os.X_OK):
            return os.path.abspath(p)
    return None


def _shared_copy(path):
    """The test user runs a copy of the binary (shared_binary.py says why)."""
    return shared_copy(path, "sagebox-podman-tests.") if path else None


SAGEBOX = _shared_copy(_find_sagebox())


def user_info():
    pw = pwd.getpwnam(USER)
    return pw.pw_uid, pw.pw_dir


def user_env(extra=None):
    uid, home = user_info()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "USER": USER,
        "LOGNAME": USER,
        "XDG_RUNTIME_DIR": f"/run/user/{uid}",
        "LANG": "C.UTF-8",
    }
    if NETWORK:
        env["SAGEBOX_NETWORK"] = os.environ["SAGEBOX_NETWORK"]
    env.update(extra or {})
    return env


def as_user_argv(argv, extra_env=None):
    """argv run as the test user, from / (podman re-executes itself and
    goes back to its directory, which the test user may not be able to
    enter: a checkout under /root is mode 700)."""
    env = user_env(extra_env)
    return ["runuser", "-u", USER, "--", "env", "-i", "-C", "/"] + \
        [f"{k}={v}" for k, v in env.items()] + list(argv)


def hosts_file(tmp_path_factory, text):
    """A hosts file the test user can read, for with_hosts()."""
    d = tmp_path_factory.mktemp("hosts")
    os.chmod(d, 0o755)
    p = d / "hosts"
    p.write_text(text)
    return p


def with_hosts(hosts, extra_env=None):
    """argv prefix: root makes a mount namespace with HOSTS bound over
    /etc/hosts (sagebox's proxy resolves names there; podman does not read
    it: the containers get --no-hosts), then switches to the test user."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)] + as_user_argv([], extra_env)


def as_user(argv, input=None, extra_env=None, timeout=300, check=False):
    return subprocess.run(as_user_argv(argv, extra_env), input=input,
                          capture_output=True, timeout=timeout, check=check,
                          cwd="/")


def podman(*args, timeout=60):
    return as_user(["podman", "--log-level=error", *args], timeout=timeout)


# SB_TEST_LAYOUT=official: the suite runs against the official SageMath
# image's layout (Sage's Python in a venv under /home/sage/sage, no
# /usr/bin/python3), built locally from the test image (official_layout.py).
BASE_IMAGE = IMAGE
if os.environ.get("SB_TEST_LAYOUT") == "official" and os.geteuid() == 0 and SAGEBOX:
    import official_layout  # noqa: E402
    IMAGE = official_layout.ensure(BASE_IMAGE)


def ours(engine="podman", extra_env=None):
    """Names of every container with our label, running or not."""
    if engine == "docker":
        r = as_user([DOCKER, "ps", "-a", "--filter", "label=sagebox=1",
                     "--format", "{{.Names}}"], extra_env=extra_env)
    else:
        r = podman("ps", "-a", "--filter", "label=sagebox=1", "--format",
                   "{{.Names}}")
    assert r.returncode == 0, r.stderr
    return [n for n in r.stdout.decode().split() if n]


def sagebox_argv(*args, image=IMAGE, backend="podman"):
    return [SAGEBOX, *args, "--backend", backend, "--image", image]


def run_code(code, lang="python", args=(), image=IMAGE, backend="podman",
             extra_env=None, timeout=300):
    """sagebox run --json; returns (result dict or None, CompletedProcess)."""
    argv = [SAGEBOX, "run", "--json", "--lang", lang, "--backend", backend,
            "--image", image, *args, "-"]
    p = as_user(argv, input=code.encode(), extra_env=extra_env,
                timeout=timeout)
    try:
        res = json.loads(p.stdout.decode())
    except ValueError:
        res = None
    return res, p


def status(backend="podman", image=IMAGE, extra_env=None, args=()):
    p = as_user([SAGEBOX, "status", "--json", "--backend", backend,
                 "--image", image, *args], extra_env=extra_env)
    return json.loads(p.stdout.decode()), p


def wait_for(pred, timeout=60, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def descendants(pid):
    out = []
    todo = [pid]
    while todo:
        p = todo.pop()
        for c in children(p):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return []


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]


@pytest.fixture(scope="session", autouse=True)
def ready():
    if os.geteuid() != 0:
        pytest.skip("run as root: the tests switch to the test user and also check root is refused")
    if not SAGEBOX:
        pytest.skip("no sagebox binary (set SAGEBOX_BIN)")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        pytest.skip(f"no user {USER}: run scripts/podman-test-setup first")
    if podman("image", "exists", IMAGE).returncode != 0:
        pytest.skip(f"image {IMAGE} missing: run scripts/podman-test-setup first")
    # what an earlier, interrupted test run may have left
    for n in ours():
        podman("rm", "-f", "--time", "0", n)


@pytest.fixture(autouse=True)
def nothing_of_ours_left():
    """After every test: `podman ps -a` shows no container of ours."""
    yield
    left = wait_for(lambda: not ours(), timeout=15) or ours()
    assert left is True or left == [], f"containers left behind: {left}\n{why_left()}"


def why_left():
    """For a failure's message: each container of ours, its state, and
    whether the sagebox that owns it (its label: boot.pid.start) runs."""
    r = podman("ps", "-a", "--filter", "label=sagebox=1", "--format",
               '{{index .Labels "sagebox.owner"}}\t{{.Names}}\t{{.Status}}')
    lines = []
    for line in r.stdout.decode().splitlines():
        owner_label = line.split("\t")[0]
        pid = owner_label.split(".")[1] if owner_label.count(".") == 2 else None
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                owner = "owner running: " + f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
        except (OSError, TypeError):
            owner = "owner gone"
        lines.append(f"{line.replace(chr(9), '  ')} ({owner})")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def cgroup_version():
    r = podman("info", "--format", "{{.Host.CgroupsVersion}}")
    return r.stdout.decode().strip()


@pytest.fixture(scope="session")
def docker_socket():
    """podman's Docker-compatible API, served as the test user."""
    if not os.access(DOCKER, os.X_OK):
        pytest.skip(f"no docker CLI at {DOCKER}")
    uid, _ = user_info()
    sock = f"/run/user/{uid}/podman/podman.sock"
    url = f"unix://{sock}"
    as_user(["mkdir", "-p", os.path.dirname(sock)], check=True)
    proc = subprocess.Popen(as_user_argv(["podman", "--log-level=error", "system", "service",
                                          "--time=0", url]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    env = {"DOCKER_HOST": url}
    ok = wait_for(lambda: as_user([DOCKER, "version"], extra_env=env).returncode == 0,
                  timeout=30, step=0.5)
    if not ok:
        proc.kill()
        pytest.fail("podman system service did not come up: "
                    + proc.stderr.read().decode(errors="replace") if proc.stderr else "")
    yield env
    # the service runs as the test user under runuser: end that process group
    try:
        os.killpg(proc.pid, 15)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
