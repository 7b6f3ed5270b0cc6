"""display: Sage's display manager through the driver's backend, from real
Sage. Each cell runs in a process of its own (the backend is installed once
per process, as in a worker) with a display pipe, and the records it wrote
are read back in order: text, LaTeX, HTML, PNG, SVG, three.js scenes, and
the skip records of the display items' caps."""
import json
import os
import struct
import subprocess
import sys

import pytest

from conftest import WORKER

pytestmark = pytest.mark.skipif(__import__("importlib.util").util.find_spec("sage") is None, reason="Sage is not installed")

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
KINDS = {"text": ["t", "item"], "latex": ["l", "item"], "html": ["h", "item"], "png": ["p", "figure"],
         "svg": ["s", "item"], "threejs": ["j", "item"]}


def caps(items=(16, 256 << 10, 512 << 10)):
    """The run frame's caps (core/display_caps.c's shape), the items' as given."""
    return {"max_side": 1024, "classes": {"figure": [8, 400 << 10, 600 << 10], "item": list(items)},
            "kinds": KINDS}


CAPS = caps()

# The child: the driver's hooks as a warm worker installs them, Sage
# imported, one call's display pipe, then each cell as a session's calls.
CHILD = r"""
import json, os, sys
sys.path.insert(0, %r)
from driver import cell, hooks, items, namespaces
hooks.install()
glb = namespaces.sage_globals()
caps = json.loads(sys.argv[2])
for code in json.loads(sys.argv[1]):
    items.begin(int(sys.argv[3]), caps, keep_fd=True)
    status = cell.run_source("sage", code, glb)
    items.end()
    sys.stdout.flush()
    if status:
        sys.exit(status)
""" % WORKER


def run(cells, caps=CAPS):
    """(stdout, [(type and kind, body)]) of the cells, run one after the
    other; a figure's body without its saved number."""
    if isinstance(cells, str):
        cells = [cells]
    r, w = os.pipe()
    p = subprocess.Popen([PY, "-c", CHILD, json.dumps(cells), json.dumps(caps), str(w)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,), cwd="/tmp")
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    out, err = p.communicate()
    assert p.returncode == 0, err.decode()
    recs = []
    while data:
        n = struct.unpack(">I", data[:4])[0]
        body = data[4:4 + n]
        data = data[4 + n:]
        recs.append((body[:2].decode(), body[6:] if body[:2] == b"Dp" else body[2:]))
    return out.decode(), recs


def test_show_expr_is_latex_and_text_stays_text():
    out, recs = run("show(integrate(1/(1+x^2), x))\nprint('between')\n2^10")
    assert out == "between\n1024\n"
    assert [k for k, _ in recs] == ["Dl", "Dt"]
    assert recs[0][1].decode() == "\\arctan\\left(x\\right)"
    assert recs[1][1] == b"1024"


def test_display_latex_lasts_for_later_cells():
    out, recs = run(["%display latex\nx^2/3", "1/2", "print(1/2)", "%display plain\n1/2"])
    assert out == "1/2\n1/2\n"
    assert recs == [("Dl", b"\\frac{1}{3} \\, x^{2}"), ("Dl", b"\\frac{1}{2}"), ("Dt", b"1/2")]


def test_matrices_keep_bold_only_when_used():
    out, recs = run("show(matrix(QQ, [[1, 2], [3, 4]]))\nshow(ZZ)")
    assert recs[0] == ("Dl", b"\\left(\\begin{array}{rr}\n1 & 2 \\\\\n3 & 4\n\\end{array}\\right)")
    assert recs[1][1].decode().startswith("\\newcommand{\\Bold}") and recs[1][1].endswith(b"\\Bold{Z}")


def test_html():
    out, recs = run("html('<b>bold</b> text')")
    assert out == "" and recs == [("Dh", b"<b>bold</b> text")]


def test_svg_and_png_in_order():
    out, recs = run("p = plot(sin(x), (x, 0, 1))\np.show()\n%display graphics vector\np")
    assert [k for k, _ in recs] == ["Dp", "Ds"]
    assert recs[0][1].startswith(b"\x89PNG")
    assert recs[1][1].lstrip().startswith(b"<?xml") and b"<svg" in recs[1][1]


@pytest.mark.parametrize("code", ["y = var('y')\nplot3d(x*y, (x, -1, 1), (y, -1, 1))", "sphere()", "show(sphere(), frame=False)"])
def test_3d_is_a_scene_then_its_png(code):
    out, recs = run(code)
    assert out == "" and [k for k, _ in recs] == ["Dj", "Dp"]
    scene = json.loads(recs[0][1])
    assert set(scene) == {"options", "bounds", "lights", "ambient", "texts", "points", "lines", "surfaces"}
    assert len(scene["bounds"]) == 2 and set(scene["bounds"][0]) == {"x", "y", "z"}
    assert scene["surfaces"] and scene["surfaces"][0]["vertices"]
    assert recs[1][1].startswith(b"\x89PNG")
    if "frame=False" in code:
        assert scene["options"]["frame"] is False


def test_caps_are_named():
    out, recs = run("show(x)\nshow(x^2)\nshow(x^3)\nhtml('y' * 200)", caps((2, 100, 512 << 10)))
    assert recs == [("Dl", b"x"), ("Dl", b"x^{2}"), ("Xl", b"c"), ("Xh", b"c")]
    out, recs = run("show(html('y' * 200))\nshow(html('a' * 90))\nhtml('b' * 90)", caps((16, 100, 150)))
    assert recs == [("Xh", b"i"), ("Dh", b"a" * 90), ("Xh", b"t")]


def test_python_values_stay_repr():
    out, recs = run("[1, 'a', {2: 3}]")
    assert out == "[1, 'a', {2: 3}]\n" and recs == [("Dt", b"[1, 'a', {2: 3}]")]
