"""cell: Sage preparse, last-expression display and the `;` rule, exit
statuses, tracebacks that show only the user's code, the job's argv."""
import io
import os
import sys

import pytest

from driver import cell, namespaces, source


@pytest.mark.parametrize("src,want", [
    ("1 + 1;", True),
    ("1 + 1", False),
    ("x = 1;  # comment\n", True),
    ("x = 1  # ends with ;\n", False),
    ("s = ';'", False),
    ("f(1);\n\n   \n", True),
    ("if True:\n    y = 2;\n", True),
    ("(1 +", False),           # a tokenize error is not a ';'
    ("", False),
])
def test_ends_with_semicolon(src, want):
    assert source.ends_with_semicolon(src) is want


def run(src, glb=None):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        status = cell.run_cell(src, glb if glb is not None else namespaces.python_globals())
    finally:
        sys.stdout, sys.stderr = old
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("src,out", [
    ("x = 2\nx * 21", "42\n"),
    ("x = 2\nx * 21;", ""),
    ("x = 2\nx * 21 ;  # quiet\n", ""),
    ("'a' + 'b'", "'ab'\n"),          # repr, as the REPL shows it
    ("None", ""),                     # None is not displayed
    ("print(1)", "1\n"),              # print returns None
    ("x = 5", ""),                    # not an expression
    ("for i in range(2):\n    i", ""),  # only a final top-level expression
    ("[1, 2]\n# trailing comment\n", "[1, 2]\n"),
])
def test_last_expression_display(src, out):
    status, got, err = run(src)
    assert (status, got, err) == (0, out, "")


def test_display_sets_underscore():
    import builtins
    run("6 * 7")
    assert builtins._ == 42
    del builtins._


@pytest.mark.parametrize("src,status,err", [
    ("import sys; sys.exit()", 0, ""),
    ("import sys; sys.exit(None)", 0, ""),
    ("import sys; sys.exit(3)", 3, ""),
    ("import sys; sys.exit('bye')", 1, "bye\n"),
    ("raise SystemExit(7)", 7, ""),
])
def test_exit_statuses(src, status, err):
    assert run(src)[0] == status and run(src)[2] == err


def test_traceback_shows_only_user_code():
    status, out, err = run("def f():\n    1/0\nf()\n")
    assert status == 1 and out == ""
    assert err.startswith("Traceback (most recent call last):\n")
    assert 'File "<cell>", line 3' in err and 'File "<cell>", line 2, in f' in err
    assert "    1/0\n" in err and "ZeroDivisionError: division by zero" in err
    assert "cell.py" not in err and "run_cell" not in err


def test_syntax_error_is_reported_as_users():
    status, out, err = run("def f(:\n  pass")
    assert status == 1 and "SyntaxError" in err and "<cell>" in err


def test_fresh_globals_per_run():
    run("secret = 1")
    assert run("print('secret' in globals())")[1] == "False\n"


def test_job_sees_a_one_element_argv():
    saved = sys.argv, getattr(sys, "orig_argv", None)
    try:
        out = io.StringIO()
        old = sys.stdout
        sys.stdout = out
        try:
            status = cell.run_code("python", "import sys, argparse\n"
                                             "p = argparse.ArgumentParser()\n"
                                             "p.add_argument('--n', type=int, default=3)\n"
                                             "print(sys.argv, p.parse_args().n)\n", "/bin/sh", None)
        finally:
            sys.stdout = old
        assert status == 0 and out.getvalue() == "['<cell>'] 3\n"
        assert sys.orig_argv[1:] == ["<cell>"]
    finally:
        sys.argv = saved[0]
        if saved[1] is not None:
            sys.orig_argv = saved[1]


sage_preparse = pytest.importorskip("sage.repl.preparse")


@pytest.mark.parametrize("src,has", [
    ("R.<x> = QQ[]\n", "R = QQ['x']"),
    ("2^10\n", "_sage_const_2 **_sage_const_10"),   # ^ is power, literals are Integers
    ("1/3\n", "_sage_const_1 = Integer(1); _sage_const_3 = Integer(3)"),
    ("1.5r\n", "1.5"),
    ("s = '2^10'\n", "s = '2^10'"),   # strings untouched
])
def test_sage_preparse(src, has):
    assert has in cell.sage_preparse(src)


def test_sage_cell_display_and_semicolon():
    glb = namespaces.sage_globals()
    status, out, err = run(cell.sage_preparse("R.<x> = QQ[]\nfactor(x^4 - 1)\n"), glb)
    assert (status, out.strip(), err) == (0, "(x - 1) * (x + 1) * (x^2 + 1)", "")
    status, out, err = run(cell.sage_preparse("2^100;\n"), namespaces.sage_globals())
    assert (status, out, err) == (0, "", "")


def test_prepare_dirs_gives_sympow_a_cache_of_the_sandboxs_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DOT_SAGE", str(tmp_path / "dot-sage"))
    monkeypatch.delenv("SYMPOW_PKGCACHEDIR", raising=False)
    cell.prepare_dirs()
    import os
    want = str(tmp_path / "dot-sage" / "sympow")
    # sympow makes only DIR/datafiles/le64
    assert os.environ["SYMPOW_PKGCACHEDIR"] == want and os.path.isdir(want + "/datafiles")
    assert (tmp_path / "home").is_dir()


SAGE_IMPORT_GC = r"""
import gc, sys
sys.path.insert(0, sys.argv[1])
from driver import namespaces
if sys.argv[2] == "off":
    gc.disable()
before = [g["collections"] for g in gc.get_stats()]
glb = namespaces.sage_globals()
after = [g["collections"] for g in gc.get_stats()]
print(before == after, gc.isenabled(), gc.get_freeze_count() > 100000, "factor" in glb)
again = namespaces.sage_globals()  # already imported: no second freeze, no change
print(gc.isenabled(), again.keys() == glb.keys())
"""


@pytest.mark.parametrize("state", ["on", "off"])
def test_sage_import_runs_without_the_collector_and_freezes_what_it_made(state):
    """The import's ~10^6 long-lived objects were walked by collection after
    collection (~100 ms of the import, on every first call): no collection
    runs during it, its objects end frozen, the collector is left as the
    caller had it. A fresh interpreter: this one has Sage imported already."""
    import subprocess
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "worker")
    p = subprocess.run([sys.executable, "-I", "-c", SAGE_IMPORT_GC, worker, state], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("\n")
    assert lines[0] == "True %s True True" % (state == "on"), p.stdout
    assert lines[1] == "%s True" % (state == "on"), p.stdout
