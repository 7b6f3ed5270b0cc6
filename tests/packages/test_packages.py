"""`sagebox packages add|list|remove` and what sandboxes see of it."""
import json
import os

import pytest

from pyindex import NAME, SRC_ONLY, VERSION

MOUNT = "/opt/sagebox/site-packages"

PROBE = f"""
import os, sys
import {NAME}
print("value", {NAME}.VALUE, {NAME}.hello())
print("file", {NAME}.__file__)
print("last", sys.path[-1] == {MOUNT!r})
for what, act in (("write", lambda: open({MOUNT!r} + "/planted.py", "w")),
                  ("change", lambda: open({NAME}.__file__, "a")),
                  ("remove", lambda: os.unlink({NAME}.__file__))):
    try:
        act()
        print(what, "allowed")
    except OSError as e:
        print(what, "refused", e.errno)
"""


def lines(res):
    return dict(l.split(" ", 1) for l in res["stdout"].splitlines() if " " in l)


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_add_seen_read_only_then_removed(box, index, isolation):
    p = box.add(index, NAME)
    assert p.returncode == 0, p.stderr
    assert "read-only at " + MOUNT in p.stderr
    # Installed in the user's directory, nothing run: a wheel unpacked.
    assert os.path.isfile(os.path.join(box.dir, NAME, "__init__.py"))
    p = box("packages", "list")
    assert p.returncode == 0 and f"  {NAME} {VERSION}" in p.stdout.splitlines(), p.stdout
    j = json.loads(box("packages", "list", "--json").stdout)
    assert j["dir"] == box.dir and [(x["name"], x["version"]) for x in j["installed"]] == [(NAME, VERSION)]
    st = json.loads(box("status", "--json").stdout)
    assert st["packages"]["bound"] is True and st["packages"]["installed"][0]["name"] == NAME
    assert NAME in box("status").stdout

    res = box.run(PROBE, "--isolation", isolation)
    out = lines(res)
    assert out.get("value") == "42 hello from sbtinypkg", res
    assert out.get("file") == f"{MOUNT}/{NAME}/__init__.py"
    assert out.get("last") == "True"  # after Sage's and Python's own directories
    for what in ("write", "change", "remove"):
        assert out.get(what, "").startswith("refused"), (what, res)
    assert not os.path.exists(os.path.join(box.dir, "planted.py"))

    p = box("packages", "remove", "SBTinyPkg")  # any spelling PEP 503 treats as the same
    assert p.returncode == 0, p.stderr
    assert f"removed {NAME} {VERSION}" in p.stderr
    assert box("packages", "list").stdout.strip().endswith("no packages")
    res = box.run(f"import {NAME}", "--isolation", isolation)
    assert "ModuleNotFoundError" in res["stderr"], res
    assert os.listdir(box.dir) == []


def test_sage_sees_it(box, index):
    assert box.add(index, NAME).returncode == 0
    p = box("run", "--lang", "sage", "-", code=f"import {NAME}; print({NAME}.VALUE * 2)")
    assert p.stdout.strip() == "84", p


def test_nothing_bound_without_packages(box):
    res = box.run(f"import os; print('mounted', os.path.exists({MOUNT!r}))")
    assert "mounted False" in res["stdout"], res
    st = json.loads(box("status", "--json").stdout)
    assert st["packages"]["bound"] is False and st["packages"]["installed"] == []


def test_index_not_in_network_refused_by_proxy(box, index):
    # Another loopback port is listed; the index's is not.
    p = box.add(index, NAME, network="127.0.0.1:1")
    assert p.returncode != 0
    assert f"the proxy refused 127.0.0.1:{index.port}" in p.stderr, p.stderr
    assert "not in the network allow-list" in p.stderr
    assert "add the refused hosts to the network setting" in p.stderr
    assert not os.path.exists(os.path.join(box.dir, NAME))


def test_sdist_only_refused(box, index):
    p = box.add(index, SRC_ONLY)
    assert p.returncode != 0
    assert "only wheels are installed" in p.stderr, p.stderr
    assert not [r for r in index.requests if r.endswith(".tar.gz")], "the sdist was downloaded"


def test_no_network_setting(box):
    p = box("packages", "add", NAME)
    assert p.returncode == 2
    assert "the network setting is none" in p.stderr and "--network pypi.org,files.pythonhosted.org" in p.stderr


@pytest.mark.parametrize("bad", ["../x", "/tmp/x.whl", "-e", "--target=/tmp", "http://x/y.whl",
                                 "git+https://x/y", "x y", "x==", "x;os_name=='posix'", ""])
def test_bad_names(box, index, bad):
    p = box.add(index, bad)
    assert p.returncode == 2, (bad, p.stderr)
    assert "is not a package name" in p.stderr or "unknown" in p.stderr, (bad, p.stderr)


def test_remove_unknown(box):
    p = box("packages", "remove", "nosuchpkg")
    assert p.returncode != 0
    assert "no package 'nosuchpkg'" in p.stderr and "packages list" in p.stderr



@pytest.mark.parametrize("lang", ["python", "sage"])
def test_session_sees_it_read_only(box, index, lang):
    from mcpclient import MCP, TOOLS
    assert box.add(index, NAME).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_")}
    env["XDG_DATA_HOME"] = box.data_home
    with MCP(os.environ.get("SAGEBOX_BIN", "build/sagebox"), env=env) as m:
        sid = m.call("session_open", {"lang": lang})["structuredContent"]["session_id"]
        try:
            r = m.call(TOOLS[lang], {"code": PROBE, "session_id": sid})["structuredContent"]
            out = lines(r)
            assert out.get("value") == "42 hello from sbtinypkg", r
            assert out.get("file") == f"{MOUNT}/{NAME}/__init__.py"
            for what in ("write", "change", "remove"):
                assert out.get(what, "").startswith("refused"), (what, r)
        finally:
            m.call("session_close", {"session_id": sid})


def test_audit_log_gets_the_network_lines(box, index, tmp_path):
    """audit_log set: what `packages add` fetched, and what the proxy
    refused, is on record there, as a server's sandboxes' traffic is; the
    refusals are still printed."""
    log, fresh = tmp_path / "audit.jsonl", tmp_path / "fresh.jsonl"
    log.write_text('{"event": "earlier"}\n')  # appended to, never replaced
    p = box("packages", "add", "--audit-log", str(log), "--network", f"127.0.0.1:{index.port}",
            "--index-url", index.url, NAME)
    assert p.returncode == 0, p.stderr
    p = box("packages", "add", "--audit-log", str(fresh), "--network", "127.0.0.1:1",
            "--index-url", index.url, "other-name")
    assert p.returncode != 0 and f"the proxy refused 127.0.0.1:{index.port}" in p.stderr, p.stderr
    entries = [json.loads(l) for l in log.read_text().splitlines()]
    assert entries[0] == {"event": "earlier"}
    net = [e for e in entries[1:] if e.get("event") == "network"]
    assert net and all(e["sandbox"] == "packages" and e["host"] == "127.0.0.1" and e["port"] == index.port
                       and e["allowed"] for e in net), entries
    assert sum(e["bytes_down"] for e in net) > 0
    refused = [json.loads(l) for l in fresh.read_text().splitlines()]
    assert refused and all(not e["allowed"] and "not in the network allow-list" in e["reason"]
                           for e in refused), refused
    assert fresh.stat().st_mode & 0o777 == 0o600  # as the server makes it


def test_audit_log_unwritable_refuses_to_download(box, index, tmp_path):
    before = len(index.requests)
    p = box("packages", "add", "--audit-log", str(tmp_path / "no" / "such" / "audit.jsonl"), "--network",
            f"127.0.0.1:{index.port}", "--index-url", index.url, NAME)
    assert p.returncode != 0 and "cannot open the audit log" in p.stderr, p.stderr
    assert len(index.requests) == before
    assert not os.path.exists(os.path.join(box.dir, NAME))
