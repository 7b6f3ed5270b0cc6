"""A Sage outside /usr with the native backend: sagebox asks that
sage for its Python, binds the installation's prefix read-only at the same
path, and nothing beside it becomes visible. Runs warm (sandbox), fresh
(sandbox-fresh) and in a session (sandbox-session), as the rest of the suite."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, VIA_SESSION, run

import sagelayout  # noqa: E402


@pytest.fixture(scope="module")
def opt():
    """An /opt-like directory outside everything the sandbox binds (not
    under /tmp, which the sandbox has its own of): SAGE_ROOT inside it, a
    secret file beside SAGE_ROOT, and a cache directory of its own."""
    top = tempfile.mkdtemp(prefix="sagebox-opt.", dir="/var/tmp")
    os.chmod(top, 0o755)
    root = os.path.join(top, "sage")
    os.mkdir(root)
    python = sagelayout.lay_out(root)
    with open(os.path.join(top, "beside.txt"), "w") as f:
        f.write("not for the sandbox\n")
    os.chmod(os.path.join(top, "beside.txt"), 0o644)
    cache = os.path.join(top, "cache")
    yield {"top": top, "root": root, "sage": os.path.join(root, "sage"), "python": python,
           "env": {"XDG_CACHE_HOME": cache}}
    shutil.rmtree(top, ignore_errors=True)


LOOK = r"""
import os, sys
print("exe", sys.executable)
print("sage", factor(2^64 + 1))
root = sys.prefix
for _ in range(5):  # SAGE_ROOT/local/var/lib/sage/venv-python3.X
    root = os.path.dirname(root)
top = os.path.dirname(root)
print("top", sorted(os.listdir(os.path.dirname(top))) == [os.path.basename(top)], sorted(os.listdir(top)))
print("beside", os.path.exists(os.path.join(top, "beside.txt")))
try:
    open(os.path.join(sys.prefix, "planted"), "w")
    print("write", "yes")
except OSError as e:
    print("write", e.errno)
"""


def lines(r):
    return dict(l.split(" ", 1) for l in r.out.splitlines() if " " in l)


def test_sage_outside_usr_runs_with_its_own_python(opt):
    r = run(LOOK, lang="sage", args=("--sage", opt["sage"]), env=opt["env"], timeout=240)
    assert r.rc == 0, r
    got = lines(r)
    # the venv's interpreter, asked of that sage, not /usr/bin/python3
    assert got["exe"] == opt["python"], r
    assert got["sage"] == "274177 * 67280421310721", r
    # the prefix only: its parent shows nothing but SAGE_ROOT, and the file
    # beside SAGE_ROOT is not there; the installation is read-only
    assert got["top"] == "True ['sage']", r
    assert got["beside"] == "False", r
    assert got["write"] in ("30", "13"), r  # EROFS (the mount), or EACCES (Landlock)


def status(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([BIN, "status", "--json", "--backend", "native", *args], capture_output=True, text=True,
                       timeout=240, env=e)
    return json.loads(p.stdout)


@pytest.mark.skipif(VIA_SESSION, reason="status is not a session call")
def test_status_says_what_was_found_bound_and_cached(opt):
    env = dict(opt["env"], XDG_CACHE_HOME=os.path.join(opt["top"], "cache-status"))
    first = status("--sage", opt["sage"], env=env)["sage_python"]
    assert first["python"] == opt["python"], first
    assert first["how"] == f"asked: {opt['sage']} --python", first
    assert first["sage_version"], first  # Debian's Sage imports through the .pth
    assert "cache" not in first, first
    assert {"path": opt["root"], "bind": "bound"} in first["binds"], first
    # shell jobs and !cmd get that sage and its python first on PATH
    assert first["path"] == [opt["root"], os.path.dirname(opt["python"])], first
    again = status("--sage", opt["sage"], env=env)["sage_python"]
    assert again["python"] == opt["python"] and again["cache"].startswith(env["XDG_CACHE_HOME"]), again
    # an explicit python wins
    set_ = status("--sage", opt["sage"], "--python", "/usr/bin/python3", env=env)["sage_python"]
    assert set_["python"] == "/usr/bin/python3" and set_["how"] == "the python setting", set_


@pytest.mark.skipif(VIA_SESSION, reason="status is not a session call")
def test_a_home_is_never_bound(opt, tmp_path):
    """A sage script copied into ~/bin names the home itself as its
    installation: refused, so the home's files stay out of the sandbox."""
    home = tempfile.mkdtemp(prefix="sagebox-home.", dir="/var/tmp")
    try:
        os.chmod(home, 0o755)
        os.mkdir(os.path.join(home, "bin"))
        shutil.copy(opt["sage"], os.path.join(home, "bin", "sage"))
        with open(os.path.join(home, "secret"), "w") as f:
            f.write("x")
        env = dict(opt["env"], HOME=home)
        st = status("--sage", os.path.join(home, "bin", "sage"), env=env)["sage_python"]
        refused = [b for b in st["binds"] if b["path"] == home]
        assert refused and refused[0]["bind"] == "refused" and "home" in refused[0]["why"], st
        r = run("import os\nprint(os.path.exists(%r), os.path.exists(%r))\n" % (home, os.path.join(home, "secret")),
                lang="python", args=("--sage", os.path.join(home, "bin", "sage")), env=env)
        assert r.rc == 0 and r.out.split() == ["False", "False"], r
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_that_sage_is_on_path_in_shell_jobs_and_shell_escapes(opt):
    """PATH leads with the sage script's dir and its Python's, as bound:
    `sage` in a shell job (and `sage -t` in it) and in !cmd is that Sage,
    not Debian's, and `python3` is its Python."""
    r = run("command -v sage\ncommand -v python3\nsage --python -c 'import sys; print(sys.executable)'\n",
            lang="shell", args=("--sage", opt["sage"]), env=opt["env"], timeout=240)
    assert r.rc == 0 and r.out.split() == [opt["sage"], opt["python"], opt["python"]], r
    r = run("!command -v sage\n", lang="sage", args=("--sage", opt["sage"]), env=opt["env"], timeout=240)
    assert r.rc == 0 and r.out.split() == [opt["sage"]], r
