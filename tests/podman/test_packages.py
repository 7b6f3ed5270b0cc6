"""`sagebox packages add` as the test user, then a stateless run in a
Podman container sees the package read-only. The wheel and its
index: tests/packages/pyindex.py."""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packages"))
from pyindex import NAME, VERSION, Index  # noqa: E402

from mcpclient import MCP  # noqa: E402
from conftest import IMAGE, SAGEBOX, USER, as_user, as_user_argv, run_code, user_info  # noqa: E402

MOUNT = "/opt/sagebox/site-packages"


@pytest.fixture
def index(tmp_path):
    ix = Index(str(tmp_path / "index"))
    yield ix
    ix.close()


@pytest.fixture
def data_home():
    uid, _ = user_info()
    d = tempfile.mkdtemp(prefix="sagebox-podman-packages.", dir="/tmp")
    os.chown(d, uid, -1)
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_packages_add_seen_read_only_in_containers(index, data_home):
    if not SAGEBOX:
        pytest.skip("no sagebox binary")
    env = {"XDG_DATA_HOME": data_home}
    p = as_user([SAGEBOX, "packages", "add", "--network", f"127.0.0.1:{index.port}", "--index-url", index.url,
                 NAME], extra_env=env)
    assert p.returncode == 0, p.stderr.decode()
    site = os.path.join(data_home, "sagebox", "site-packages")
    assert os.stat(os.path.join(site, NAME, "__init__.py")).st_uid == user_info()[0]
    code = f"""
import os, sys
import {NAME}
print("value", {NAME}.VALUE, {NAME}.__file__)
print("last", sys.path[-1])
try:
    open({MOUNT!r} + "/planted.py", "w")
    print("write allowed")
except OSError as e:
    print("write refused", e.errno)
"""
    res, proc = run_code(code, extra_env=env)
    assert res, proc.stderr.decode()
    out = res["stdout"].splitlines()
    assert f"value 42 {MOUNT}/{NAME}/__init__.py" in out, res
    assert f"last {MOUNT}" in out
    assert any(l.startswith("write refused") for l in out), res
    assert not os.path.exists(os.path.join(site, "planted.py"))

    p = as_user([SAGEBOX, "packages", "remove", NAME], extra_env=env)
    assert p.returncode == 0 and f"removed {NAME} {VERSION}" in p.stderr.decode(), p.stderr.decode()
    res, proc = run_code(f"import {NAME}", extra_env=env)
    assert res and "ModuleNotFoundError" in res["stderr"], (res, proc.stderr.decode())


def test_added_while_the_server_runs(index, data_home):
    """A running `sagebox mcp --backend podman` whose directory did not exist
    at its start: it makes it, binds it (empty) into its containers, and a
    package added later imports in the next warm call, read-only."""
    if not SAGEBOX:
        pytest.skip("no sagebox binary")
    env = {"XDG_DATA_HOME": data_home}
    site = os.path.join(data_home, "sagebox", "site-packages")
    assert not os.path.exists(site)
    with MCP(SAGEBOX, ("--backend", "podman", "--image", IMAGE), prefix=as_user_argv([], extra_env=env)) as m:
        assert os.stat(site).st_uid == user_info()[0] and os.stat(site).st_mode & 0o777 == 0o755
        r = m.run(f"import {NAME}")
        assert "ModuleNotFoundError" in r["stderr"], r
        p = as_user([SAGEBOX, "packages", "add", "--network", f"127.0.0.1:{index.port}", "--index-url",
                     index.url, NAME], extra_env=env)
        assert p.returncode == 0, p.stderr.decode()
        r = m.run(f"""
import {NAME}
print("value", {NAME}.VALUE, {NAME}.__file__)
try:
    open({MOUNT!r} + "/planted.py", "w")
    print("write allowed")
except OSError as e:
    print("write refused", e.errno)
""")
        out = r["stdout"].splitlines()
        assert f"value 42 {MOUNT}/{NAME}/__init__.py" in out, r
        assert any(l.startswith("write refused") for l in out), r
