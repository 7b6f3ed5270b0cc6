"""The official SageMath image's layout with no python setting:
sagebox asks the image's sage for its Python (a venv under /home/sage/sage,
no /usr/bin/python3 in the image), remembers the answer by the image's ID,
and runs warm, fresh, in a session and with figures. The image is built
locally from the test image (official_layout.py). The rest of the podman
suite runs against it too with SB_TEST_LAYOUT=official (meson test
podman-official-layout)."""
import os
import shutil
import tempfile

import pytest

from mcpclient import MCP  # noqa: E402

import official_layout  # noqa: E402
from conftest import BASE_IMAGE, SAGEBOX, as_user, as_user_argv, run_code, status  # noqa: E402


@pytest.fixture(scope="module")
def image():
    return official_layout.ensure(BASE_IMAGE)


@pytest.fixture(scope="module")
def cache():
    """A cache directory of the test user's own, fresh for this module."""
    d = tempfile.mkdtemp(prefix="sagebox-official-cache.")
    os.chmod(d, 0o777)
    yield {"XDG_CACHE_HOME": d}
    shutil.rmtree(d, ignore_errors=True)


def test_the_image_has_the_official_layout(image):
    r = as_user(["podman", "--log-level=error", "run", "--rm", "--network=none", "--entrypoint", "/bin/sh", image,
                 "-c", "id -un; readlink /usr/bin/sage; test -e /usr/bin/python3 && echo python3 || echo none; "
                 "test -x " + official_layout.PYTHON + " && echo venv"])
    assert r.stdout.decode().split() == ["sage", "/home/sage/sage/sage", "none", "venv"], r


def test_status_finds_the_venv_python_and_remembers_it(image, cache):
    st, p = status(image=image, extra_env=cache)
    sp = st.get("sage_python")
    assert sp and sp["python"] == official_layout.PYTHON, (st, p.stderr)
    assert sp["how"].startswith("asked: /usr/bin/sage --python in image " + image), sp
    assert sp["sage_version"] and "cache" not in sp, sp
    assert st["ok"], st
    again, _ = status(image=image, extra_env=cache)
    assert again["sage_python"]["python"] == official_layout.PYTHON, again
    assert again["sage_python"]["cache"] == cache["XDG_CACHE_HOME"] + "/sagebox/sage-python.json", again
    text = as_user([SAGEBOX, "status", "--backend", "podman", "--image", image], extra_env=cache)
    assert f"python        {official_layout.PYTHON}, Sage " in text.stdout.decode(), text.stdout.decode()


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_sage_runs_with_defaults(image, cache, isolation):
    res, p = run_code("import sys\nprint(sys.executable)\nprint(factor(2^64 + 1))\n", lang="sage", image=image,
                      args=("--isolation", isolation, "--memory", "1g", "--timeout", "240"), extra_env=cache,
                      timeout=600)
    assert res and res["ok"], (res, p.stderr)
    assert res["stdout"].split("\n")[:2] == [official_layout.PYTHON, "274177 * 67280421310721"], res


def test_figures_and_a_session_with_defaults(image, cache):
    with MCP(SAGEBOX, ("--backend", "podman", "--image", image, "--memory", "1g"),
             prefix=as_user_argv([], extra_env=cache)) as mcp:
        r = mcp.call("run_sagemath", {"code": "p = plot(sin(x), (x, 0, 1))\np.show()\nprint(2^10)",
                                      "timeout_seconds": 240}, timeout=600)
        assert not r.get("isError"), r
        assert r["structuredContent"]["stdout"].strip() == "1024", r
        assert [c["type"] for c in r["content"]].count("image") == 1, r
        o = mcp.call("session_open", {"lang": "sage"}, timeout=600)
        assert not o.get("isError"), o
        sid = o["structuredContent"]["session_id"]
        a = mcp.call("run_sagemath", {"code": "R.<x> = QQ[]\nf = x^4 - 1", "session_id": sid}, timeout=600)
        assert not a.get("isError"), a
        b = mcp.call("run_sagemath", {"code": "print(factor(f))", "session_id": sid}, timeout=600)
        assert b["structuredContent"]["stdout"].strip() == "(x - 1) * (x + 1) * (x^2 + 1)", b
        mcp.call("session_close", {"session_id": sid}, timeout=120)


def test_nothing_found_names_what_was_tried_and_the_setting(image, cache):
    res, p = run_code("print(1)", image=image, args=("--sage", "/opt/nosage/sage"), extra_env=cache)
    err = (res or {}).get("error") or p.stderr.decode()
    assert "cannot find Sage's Python in image " + image in err, (res, p.stderr)
    assert "/opt/nosage/sage --python" in err and "/usr/bin/python3 -I" in err, err
    hint = (res or {}).get("hint") or p.stderr.decode()
    assert "set python (--python, SAGEBOX_PYTHON)" in hint, (res, p.stderr)


def test_an_explicit_python_still_wins(image, cache):
    res, p = run_code("import sys\nprint(sys.executable)", image=image, extra_env=cache,
                      args=("--python", "/usr/bin/python3.11"))
    assert res and res["ok"] and res["stdout"].strip() == "/usr/bin/python3.11", (res, p.stderr)
