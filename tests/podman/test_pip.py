"""pip inside a Podman container when the user's `network` list allows the
index (the native version is tests/network/test_pip.py): %pip
in a Python or Sage session and `pip install` in a shell session install
the hand-made wheel of tests/packages/pyindex.py from a simple index on the
host's loopback, reached as pypi.test through sagebox's proxy (sagebox runs
in a mount namespace with a test hosts file, as test_network.py). What pip
installed imports in the next call, lies under /work/.local only, and is
gone with the session. Without network %pip says why in one line. The
image needs pip: `sagebox image build` puts python3-pip in it."""
import os
import sys

import pytest
from mcpclient import MCP, TOOLS

from conftest import IMAGE, SAGEBOX, as_user_argv, hosts_file, with_hosts

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages"))
from pyindex import NAME, VERSION, serve  # noqa: E402


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    yield from serve(tmp_path_factory)


# A server per test: the suite checks after each test that no container of
# ours is left.
@pytest.fixture
def box(tmp_path_factory, index):
    hosts = hosts_file(tmp_path_factory, "127.0.0.1 localhost\n127.0.0.1 pypi.test\n")
    # The index listens on loopback: its address is listed too.
    net = f"pypi.test:{index.port}, 127.0.0.1:{index.port}"
    # (1g: Sage needs more than the default where rlimits stand in for cgroups)
    m = MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE, "--network", net, "--memory", "1g"),
            prefix=with_hosts(hosts))
    yield m
    m.close()


def call(m, sid, lang, code):
    return m.call(TOOLS[lang], {"code": code, "session_id": sid}, timeout=300)["structuredContent"]


# Run by python3 in the container: the module, where it lies, and every
# file in /work outside .local, at any depth.
PROBE = f"""
import os, sys, {NAME}
print("value", {NAME}.VALUE, {NAME}.hello())
print("file", {NAME}.__file__)
print("site", "/work/.local/lib/python%d.%d/site-packages" % sys.version_info[:2])
print("outside", sorted(os.path.join(d, f) for d, _, fs in os.walk("/work") for f in fs
                        if not (d + "/").startswith("/work/.local/")))
"""


def lines(s):
    return dict(l.split(" ", 1) for l in s["stdout"].splitlines() if " " in l)


def open_session(m, lang):
    return m.call("session_open", {"lang": lang})["structuredContent"]["session_id"]


def gone(m, lang):
    """A new session of lang can import it no more, and has no .local."""
    sid = open_session(m, lang)
    try:
        s = call(m, sid, lang, f"python3 -c 'import {NAME}'; ls -A /work" if lang == "shell"
                 else f"import os\nprint(os.listdir('/work'))\nimport {NAME}")
        assert "ModuleNotFoundError" in s["stderr"] and ".local" not in s["stdout"], s
    finally:
        m.call("session_close", {"session_id": sid})


@pytest.mark.parametrize("lang, how", [("python", "%pip install"), ("sage", "%pip install"),
                                       ("shell", "pip install")])
def test_pip_install_in_a_container_session(box, index, lang, how):
    sid = open_session(box, lang)
    try:
        s = call(box, sid, lang, f"{how} {index.pip_args('pypi.test')}")
        assert f"Successfully installed {NAME}-{VERSION}" in s["stdout"], (s["stdout"], s["stderr"])
        # the next call imports it (in the session's Python, or a python3 the shell starts)
        s = call(box, sid, lang, f"python3 - <<'EOF'\n{PROBE}\nEOF" if lang == "shell" else PROBE)
        out = lines(s)
        assert out.get("value") == "42 hello from sbtinypkg", s
        assert out.get("file") == f"{out.get('site')}/{NAME}/__init__.py", s
        assert out.get("outside") == "[]", s  # pip wrote nothing in /work but .local
    finally:
        box.call("session_close", {"session_id": sid})
    gone(box, lang)


def test_no_network_pip_says_so_in_one_line():
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE), prefix=as_user_argv([])) as m:
        sid = open_session(m, "python")
        try:
            s = call(m, sid, "python", f"%pip install {NAME}")
        finally:
            m.call("session_close", {"session_id": sid})
    assert s["stderr"].startswith("UsageError: %pip: installing packages is not possible here: "
                                  "the sandbox has no network"), s
    assert "`network` setting" in s["stderr"] and s["stderr"].count("\n") == 1, s
