"""pip inside the sandbox when the user's `network` list allows the index:
`pip install` in a shell session, %pip in a Python session,
%pip and `!sage -pip` in a Sage session install the hand-made wheel of
tests/packages/pyindex.py from a simple index on the host's loopback,
reached by name through sagebox's proxy (its hosts file maps pypi.test to
127.0.0.1; sagebox runs in a mount namespace of its own, as test_inside.py).
What pip installed imports in the next call, lies under /work/.local only,
and is gone with the session. Without network %pip says why in one line."""
import os
import shutil
import time
import sys

import pytest

from conftest import BIN
from mcpclient import MCP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages"))
from pyindex import NAME, VERSION, serve  # noqa: E402

SITE = "/work/.local/lib/python%d.%d/site-packages" % sys.version_info[:2]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    yield from serve(tmp_path_factory)


@pytest.fixture(scope="module")
def box(tmp_path_factory, index):
    if os.geteuid() != 0:
        pytest.skip("needs root: sagebox's hosts file is bound over /etc/hosts in a mount namespace")
    if not shutil.which("unshare"):
        pytest.skip("needs unshare (util-linux)")
    hosts = tmp_path_factory.mktemp("hosts") / "hosts"
    hosts.write_text("127.0.0.1 localhost\n127.0.0.1 pypi.test\n")
    # The index listens on loopback: its address is listed too.
    net = f"pypi.test:{index.port}, 127.0.0.1:{index.port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_") or k == "SAGEBOX_BIN"}
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
              'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)]
    m = MCP(BIN, ["--network", net], env=env, prefix=prefix)
    yield m
    m.close()


def install_args(index):
    # plain http: pip wants the host marked trusted (pypi.org is https)
    return f"--index-url http://pypi.test:{index.port}/simple --trusted-host pypi.test:{index.port} {NAME}"


def call(m, sid, lang, code):
    tool = {"sage": "run_sagemath", "python": "run_python", "shell": "run_shell"}[lang]
    r = m.call(tool, {"code": code, "session_id": sid})
    return r, r["structuredContent"]


PROBE = f"""
import os, {NAME}
print("value", {NAME}.VALUE, {NAME}.hello())
print("file", {NAME}.__file__)
print("outside", sorted(p for p in os.listdir("/work") if p != ".local"))
"""


def lines(s):
    return dict(l.split(" ", 1) for l in s["stdout"].splitlines() if " " in l)


def gone(m, lang):
    """A new session of lang cannot import it."""
    sid = m.call("session_open", {"lang": lang})["structuredContent"]["session_id"]
    try:
        code = f"python3 -c 'import {NAME}'" if lang == "shell" else f"import {NAME}"
        _, s = call(m, sid, lang, code)
        assert "ModuleNotFoundError" in s["stderr"], s
        _, s = call(m, sid, "shell" if lang == "shell" else lang,
                    "ls -A /work" if lang == "shell" else "import os; print(os.listdir('/work'))")
        assert ".local" not in s["stdout"], s
    finally:
        m.call("session_close", {"session_id": sid})


@pytest.mark.parametrize("lang, how", [("shell", "pip install"), ("python", "%pip install"),
                                       ("sage", "%pip install"), ("sage", "!sage -pip install")])
def test_pip_install_in_a_session(box, index, lang, how):
    sid = box.call("session_open", {"lang": lang})["structuredContent"]["session_id"]
    try:
        r, s = call(box, sid, lang, f"{how} {install_args(index)}")
        assert f"Successfully installed {NAME}-{VERSION}" in s["stdout"], s
        # pip's files are not listed as the call's output
        links = [c for c in r["content"] if c.get("type") == "resource_link"]
        assert not [c for c in links if ".local" in c.get("uri", "")], links
        if lang == "shell":
            _, s = call(box, sid, "shell", f"python3 - <<'EOF'\n{PROBE}\nEOF\n"
                        "echo found $(find /work -type f ! -path '/work/.local/*' | wc -l)")
        else:
            _, s = call(box, sid, lang, PROBE)
        out = lines(s)
        assert out.get("value") == "42 hello from sbtinypkg", s
        assert out.get("file") == f"{SITE}/{NAME}/__init__.py", s
        assert out.get("outside") == "[]", s  # nothing written in /work but .local
        if lang == "shell":
            assert out.get("found") == "0", s  # no file outside .local, at any depth
    finally:
        box.call("session_close", {"session_id": sid})
    gone(box, lang)


def test_pip_install_then_import_in_one_python_cell(box, index):
    sid = box.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
    try:
        _, s = call(box, sid, "python", f"!pip install -q {install_args(index)}\nimport {NAME}\nprint({NAME}.VALUE)")
        assert s["stdout"].strip().endswith("42"), s
    finally:
        box.call("session_close", {"session_id": sid})


def test_stateless_pip_is_gone_with_the_call(box, index):
    r = box.run(f"!pip install -q {install_args(index)}\nimport {NAME}\nprint({NAME}.__file__)")
    assert r["stdout"].strip().endswith(f"/.local/lib/python%d.%d/site-packages/{NAME}/__init__.py"
                                        % sys.version_info[:2]), r
    r = box.run(f"import {NAME}")
    assert "ModuleNotFoundError" in r["stderr"], r


def test_no_network_pip_says_so_in_one_line():
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_") or k == "SAGEBOX_BIN"}
    with MCP(BIN, env=env) as m:
        sid = m.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
        try:
            _, s = call(m, sid, "python", f"%pip install {NAME}")
        finally:
            m.call("session_close", {"session_id": sid})
    assert s["stderr"].startswith("UsageError: %pip: installing packages is not possible here: "
                                  "the sandbox has no network"), s
    assert "`network` setting" in s["stderr"] and s["stderr"].count("\n") == 1, s


def test_refused_index_fails_the_cell_at_once_saying_why(box):
    sid = box.call("session_open", {"lang": "python"})["structuredContent"]["session_id"]
    try:
        t = time.monotonic()
        r, s = call(box, sid, "python", "%pip install sbnothere")  # pypi.org is not listed
        took = time.monotonic() - t
    finally:
        box.call("session_close", {"session_id": sid})
    assert r.get("isError") and s["stderr"].endswith("UsageError: %pip: pip failed (its messages are above)\n"), s
    assert "403 Forbidden" in s["stderr"], s
    assert "[network] Only these hosts are reachable" in r["content"][0]["text"], r
    assert took < 5, took  # two tries, not pip's five with 8 s of back-off
