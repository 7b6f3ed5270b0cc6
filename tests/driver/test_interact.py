"""interact: Sage's @interact in the driver, from real Sage (and plain
Python). Each test runs steps in a process of its own, as a session's
interpreter runs calls: a cell, or an interact run again with values (the
run frame's op, interact.update). The records of the figure pipe are read
back in order: the interact's item ("Di", its JSON), its first rendering,
its end ("Ei"), and what each update displayed."""
import json
import os
import struct
import subprocess
import sys

import pytest

from conftest import WORKER

HAVE_SAGE = __import__("importlib.util").util.find_spec("sage") is not None
sage_only = pytest.mark.skipif(not HAVE_SAGE, reason="Sage is not installed")

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
KINDS = {"text": ["t", "item"], "latex": ["l", "item"], "html": ["h", "item"], "png": ["p", "figure"],
         "svg": ["s", "item"], "threejs": ["j", "item"], "interact": ["i", "item"]}


def caps(items=(32, 256 << 10, 512 << 10)):
    """The run frame's caps (core/display_caps.c's shape), the items' as given."""
    return {"max_side": 1024, "classes": {"figure": [8, 400 << 10, 600 << 10], "item": list(items)},
            "kinds": KINDS}


CAPS = caps()

# steps: {"cell": code} | {"update": N or an id, "values": {...}}; N: the
# Nth interact kept (in the order made). keep: a session's interpreter.
CHILD = r"""
import json, os, sys
sys.path.insert(0, %r)
from driver import cell, hooks, interact, items, namespaces
hooks.install()
steps, caps, fd, lang, keep, pipe = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1", sys.argv[6] == "1"
glb = namespaces.sage_globals() if lang == "sage" else namespaces.python_globals()
interact.keep(keep)
statuses = []
for st in steps:
    if pipe:
        items.begin(fd, caps, keep_fd=True)
    if "cell" in st:
        statuses.append(cell.run_source(lang, st["cell"], glb))
    else:
        u = st["update"]
        iid = list(interact._kept)[u] if isinstance(u, int) else u
        data = st["values"] if isinstance(st["values"], str) else json.dumps(st["values"])
        statuses.append(interact.update(iid, data.encode(), glb))
    items.end()
    sys.stdout.flush()
    sys.stderr.flush()
os.close(fd)
sys.stdout.write("\nSTATUSES " + json.dumps(statuses) + "\n")
""" % WORKER


class Run:
    def __init__(self, out, err, recs, statuses):
        self.out, self.err, self.recs, self.statuses = out, err, recs, statuses

    def kinds(self):
        return [k for k, _ in self.recs]

    def items(self, kind):
        return [b for k, b in self.recs if k == kind]

    def interact(self, n=0):
        return json.loads(self.items("Di")[n])


def run(steps, lang="sage", keep=True, caps=CAPS, pipe=True):
    if isinstance(steps, str):
        steps = [{"cell": steps}]
    r, w = os.pipe()
    p = subprocess.Popen([PY, "-c", CHILD, json.dumps(steps), json.dumps(caps), str(w), lang, "1" if keep else "0",
                          "1" if pipe else "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(w,), cwd="/tmp")
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    out, err = p.communicate()
    assert p.returncode == 0, err.decode()
    out = out.decode()
    out, _, tail = out.rpartition("\nSTATUSES ")
    recs = []
    while data:
        n = struct.unpack(">I", data[:4])[0]
        body = data[4:4 + n]
        data = data[4 + n:]
        # (a figure: "P" and its PNG, without its saved number)
        recs.append(("P", body[6:]) if body[:2] == b"Dp" else (body[:2].decode(), body[2:]))
    return Run(out, err.decode(), recs, json.loads(tail))


def control(it, name):
    return next(c for c in it["controls"] if c["name"] == name)


FIRST = """
@interact
def _(n=slider(1, 20, 1, default=5), f=selector(['sin', 'cos'])):
    print("n=%s %s f=%s" % (n, type(n).__name__, f))
    show(plot(eval(f)(n*x), (x, 0, 2*pi)))
"""


@sage_only
def test_decorator_sends_item_around_first_rendering_then_update_runs_again():
    r = run([{"cell": FIRST}, {"update": 0, "values": {"n": 7, "f": 1}}, {"update": 0, "values": {"f": 0}}])
    assert r.statuses == [0, 0, 0]
    assert r.kinds() == ["Di", "Dt", "P", "Ei", "Dt", "P", "Dt", "P"]
    it = r.interact()
    assert it["id"].startswith("i") and len(it["id"]) == 17 and it["manual"] is False
    assert it["controls"] == [
        {"name": "n", "label": "n", "type": "slider", "min": 1, "max": 20, "step": 1, "default": 5},
        {"name": "f", "label": "f", "type": "selector", "options": ["sin", "cos"], "buttons": False, "default": 0}]
    # printed text is a text item of the rendering, in order, and stdout
    assert r.items("Dt") == [b"n=5 Integer f=sin", b"n=7 Integer f=cos", b"n=5 Integer f=sin"]
    assert r.out == "n=5 Integer f=sin\nn=7 Integer f=cos\nn=5 Integer f=sin\n"
    pngs = r.items("P")
    assert all(p.startswith(b"\x89PNG") for p in pngs) and pngs[0] != pngs[1]


ALL_KINDS = r"""
@interact
def f(a=slider(0, 10, 2, default=5, label='A'), b=slider(e, pi), c=slider(0, 1, 1/4), d=slider([10, 20, 30], default=21),
      r=range_slider(5, 20), s=selector([(1, 'one'), (2, 'two')], buttons=True, default=2), k=checkbox(False),
      t=input_box('x^2', label='expr'), u=input_box('hi', type=str), g=input_grid(2, 2, default=[[1, 0], [0, 1]], to_value=matrix),
      col=color_selector('orange'), txt=text_control('note'),
      n=5, fl=True, ch=['a', 'b'], st='plain', tu=(0, 10), tf=(0, 1, 0.25), ex=sin(x), m=matrix(QQ, [[1, 2]]),
      lab=('Label', 3), dflt=(2, [1, 2]), gen=(i for i in [7, 8, 9])):
    for name, v in sorted(locals().items()):
        print(name, repr(v).replace("\n", ";"), type(v).__name__)
"""


@sage_only
def test_every_control_kind_declared_and_converted():
    r = run([{"cell": ALL_KINDS},
             {"update": 0, "values": {"a": 10, "b": 3.0182818284590453, "c": 3, "d": 0, "r": [6, 19], "s": 0, "k": True,
                                      "t": "x^3", "u": "x^3", "g": [["2", "x"], ["0", "1/2"]], "col": "#00ff00",
                                      "n": -5, "fl": False, "ch": 1, "st": "other", "tu": 10, "tf": 0.75, "ex": "cos(x)",
                                      "m": [["3", "4"]], "lab": 9, "dflt": 0, "gen": 2}}])
    assert r.statuses == [0, 0], r.err
    it = r.interact()
    c = {x["name"]: {k: v for k, v in x.items() if k != "name"} for x in it["controls"]}
    assert c["a"] == {"label": "A", "type": "slider", "min": 0, "max": 10, "step": 2, "default": 4}
    assert c["b"]["type"] == "slider" and c["b"]["min"] == pytest.approx(2.718281828) and c["b"]["step"] == pytest.approx(0.1)
    assert c["c"] == {"label": "c", "type": "slider", "options": ["0", "1/4", "1/2", "3/4", "1"], "default": 2}
    assert c["d"] == {"label": "d", "type": "slider", "options": ["10", "20", "30"], "default": 1}
    assert c["r"] == {"label": "r", "type": "range_slider", "min": 5, "max": 20, "step": 1, "default": [9, 16]}
    assert c["s"] == {"label": "s", "type": "selector", "options": ["one", "two"], "buttons": True, "default": 1}
    assert c["k"] == {"label": "k", "type": "checkbox", "default": False}
    assert c["t"] == {"label": "expr", "type": "input_box", "default": "x^2", "rows": 1, "width": 80, "evaluate": True}
    assert c["u"]["evaluate"] is False and c["u"]["default"] == "hi"
    assert c["g"] == {"label": "g", "type": "input_grid", "rows": 2, "cols": 2, "width": 4,
                      "default": [["1", "0"], ["0", "1"]]}
    assert c["col"] == {"label": "col", "type": "color_selector", "default": "#ffa500", "hide_box": False}
    assert c["txt"] == {"label": "", "type": "text_control", "text": "note"}
    # the plain defaults, by Sage's own rules
    assert c["n"] == {"label": "n", "type": "slider", "min": -5, "max": 15, "step": 1, "default": 5}
    assert c["fl"] == {"label": "fl", "type": "checkbox", "default": True}
    assert c["ch"] == {"label": "ch", "type": "selector", "options": ["a", "b"], "buttons": False, "default": 0}
    assert c["st"] == {"label": "st", "type": "input_box", "default": "plain", "rows": 1, "width": 80, "evaluate": False}
    assert c["tu"] == {"label": "tu", "type": "slider", "min": 0, "max": 10, "step": 1, "default": 5}
    assert c["tf"] == {"label": "tf", "type": "slider", "min": 0, "max": 1, "step": 0.25, "default": 0.5}
    assert c["ex"]["type"] == "input_box" and c["ex"]["default"] == "sin(x)" and c["ex"]["evaluate"] is True
    assert c["m"]["type"] == "input_grid" and c["m"]["default"] == [["1", "2"]]
    assert c["lab"]["label"] == "Label" and c["lab"]["type"] == "slider" and c["lab"]["default"] == 3
    assert c["dflt"]["options"] == ["1", "2"] and c["dflt"]["default"] == 1
    assert c["gen"] == {"label": "gen", "type": "slider", "options": ["7", "8", "9"], "default": 0}
    first, second = r.items("Dt")
    got = dict(line.split(" ", 1) for line in second.decode().splitlines())
    assert got["a"] == "10 Integer" and got["b"].endswith("RealNumber") and got["c"] == "3/4 Rational"
    assert got["d"] == "10 Integer" and got["r"] == "(6, 19) tuple" and got["s"] == "1 Integer"
    assert got["k"] == "True bool" and got["t"] == "x^3 Expression" and got["u"] == "'x^3' str"
    assert got["g"] == "[  2   x];[  0 1/2] Matrix_symbolic_dense" and got["m"] == "[3 4] Matrix_rational_dense"
    assert got["col"] == "RGB color (0.0, 1.0, 0.0) Color" and got["txt"] == "'note' str"
    assert got["n"] == "-5 int" and got["fl"] == "False bool" and got["ch"] == "'b' str" and got["st"] == "'other' str"
    assert got["tu"] == "10 int" and got["tf"] == "0.75 float" and got["ex"] == "cos(x) Expression"
    assert got["lab"] == "9 int" and got["dflt"] == "1 Integer" and got["gen"] == "9 Integer"
    fgot = dict(line.split(" ", 1) for line in first.decode().splitlines())
    assert fgot["a"] == "4 Integer" and fgot["c"] == "1/2 Rational" and fgot["d"] == "20 Integer"


@sage_only
def test_function_form_by_name_and_manual():
    r = run("""
def g(n, q=2, auto_update=False):
    print("g", n, q)
interact(g, n=(1, 9))
@interact(p=['x', 'y'])
def h(p, **rest):
    print("h", p, rest)
interact(h, extra=True)
""")
    assert r.statuses == [0] and r.err == ""
    g, h1, h2 = (json.loads(b) for b in r.items("Di"))
    assert g["manual"] is True and [c["name"] for c in g["controls"]] == ["n", "q"]
    assert control(g, "n")["default"] == 5 and control(g, "q")["type"] == "slider"
    assert [c["name"] for c in h2["controls"]] == ["p", "extra"] and control(h2, "extra")["type"] == "checkbox"
    # interact(g, ...) as the cell's last expression shows nothing but the interact
    assert r.out == "g 5 2\nh x {}\nh x {'extra': True}\n"
    assert "function" not in "".join(b.decode() for b in r.items("Dt"))


@sage_only
def test_values_outside_the_controls_are_refused_and_nothing_runs():
    cell = """
ran = 0
@interact
def _(n=slider(1, 20, 1), f=selector(['sin', 'cos']), b=checkbox(), c=color_selector(), g=input_grid(1, 2), t=input_box('', type=str)):
    global ran
    ran += 1
"""
    bad = [{"n": 21}, {"n": 0}, {"n": 1.5}, {"n": "3"}, {"n": True}, {"f": 2}, {"f": -1}, {"f": "sin"}, {"b": 1},
           {"c": "red"}, {"c": "#12345g"}, {"g": [["1"]]}, {"g": [["1", 2]]}, {"t": 5}, {"nope": 1}, [1], "not json",
           {"t": "x" * 10001}]
    steps = [{"cell": cell}] + [{"update": 0, "values": v} for v in bad] + [{"cell": "print(ran)"}]
    r = run(steps)
    assert r.statuses == [0] + [2] * len(bad) + [0]
    assert r.out == "1\n"  # only the first rendering ran
    lines = r.err.splitlines()
    assert len(lines) == len(bad) and all(ln.startswith("interact_update: ") for ln in lines)
    assert "control 'n' (slider): 21 is outside 1..20" in lines[0]
    assert "not on the slider's steps" in lines[2]
    assert "control 'f' (selector): must be an index from 0 to 1" in lines[5]
    assert "has no control 'nope'" in lines[14]


@sage_only
def test_unknown_interact_and_state_of_the_session():
    r = run([{"cell": "@interact\ndef _(k=(1, 5)):\n    global seen\n    seen = k\n"},
             {"update": 0, "values": {"k": 4}}, {"cell": "print(seen)"},
             {"update": "i0000000000000000", "values": {}}])
    assert r.statuses == [0, 0, 0, 1]
    assert r.out == "4\n"
    assert "interact i0000000000000000 is not in this session any more" in r.err


@sage_only
def test_stateless_call_sends_the_item_but_keeps_nothing():
    r = run([{"cell": FIRST}, {"cell": "from driver import interact as i\nprint(len(i._kept))"}], keep=False)
    assert r.kinds() == ["Di", "Dt", "P", "Ei"]
    assert r.out.endswith("\n0\n")


def test_python_session_without_sage():
    r = run([{"cell": """
import sys
assert 'sage' not in sys.modules
@interact
def f(n=slider(1, 10, 1, default=3), x=slider(0.0, 1.0, 0.25), c=['p', 'q'], b=False, s='t', col=color_selector((1, 0, 0)),
      e=input_box('1 + 2'), g=input_grid(1, 2, default=[5, 6])):
    print(n, type(n).__name__, x, c, b, s, col, e, g)
"""}, {"update": 0, "values": {"n": 10, "x": 0.75, "c": 1, "b": True, "s": "u", "col": "#00FF00", "e": "2 ** 10",
                                "g": [["1", "[2]"]]}}], lang="python")
    assert r.statuses == [0, 0], r.err
    assert r.items("Dt") == [b"3 int 0.0 p False t #ff0000 3 [[5, 6]]", b"10 int 0.75 q True u #00ff00 1024 [[1, [2]]]"]


@sage_only
def test_error_in_the_function_is_shown_and_the_interact_stays():
    r = run([{"cell": "@interact\ndef _(n=(0, 4)):\n    print(1 / (n - 2))\nprint('after')"},
             {"update": 0, "values": {"n": 3}}])
    assert r.statuses == [0, 0]
    assert "ZeroDivisionError" in r.err and r.out.startswith("after\n")  # the cell went on
    assert r.kinds() == ["Di", "Ei", "Dt"] and r.items("Dt") == [b"1"]


@sage_only
def test_over_the_caps_or_without_a_pipe():
    r = run([{"cell": FIRST}], caps=caps(items=(0, 256 << 10, 512 << 10)))
    assert r.kinds() == ["Xi", "Xt", "P"]  # neither the item nor its text; no end
    r = run([{"cell": FIRST}], pipe=False, keep=False)
    assert r.out.startswith("[interact _: n: slider 1..20, f: selector (sin, cos); no controls here")
    assert "n=5 Integer f=sin" in r.out


@sage_only
def test_bad_definitions_say_what_is_wrong():
    r = run([{"cell": "@interact\ndef f(n):\n    pass"}, {"cell": "interact(lambda n=1: 0, m=2)"},
             {"cell": "slider(5, 1)"}, {"cell": "selector([1, 2], default=3)"}, {"cell": "slider(range(2000))"}])
    assert r.statuses == [1] * 5
    assert "the argument 'n' of f has no default and no control; give it one" in r.err
    assert "has no argument 'm'" in r.err
    assert "maximum 1 is below its minimum 5" in r.err
    assert "the default 3 is not one of the selector's values" in r.err
    assert "a slider takes at most 1000 values" in r.err
