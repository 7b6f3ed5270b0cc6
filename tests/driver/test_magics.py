"""magics: IPython and Sage REPL syntax in cells (%time, %timeit, %%time,
%%timeit, %prun, %display, !cmd, x = !cmd, x?, x??, pasted prompts) through
IPython's own transformer, the one-line refusals, and plain code untouched.
The cells run as a job's do (cell.run_source); output is read at the fd
level, since !cmd writes there."""
import os
import re

import pytest

from driver import cell, magics, namespaces

pytestmark = pytest.mark.skipif(not magics.load(), reason="IPython is not installed")


def run(capfd, code, glb=None, lang="python"):
    glb = glb if glb is not None else (namespaces.python_globals() if lang == "python" else namespaces.sage_globals())
    status = cell.run_source(lang, code, glb)
    out, err = capfd.readouterr()
    return status, out, err


TIMES = re.compile(r"^CPU times: user .+, sys: .+, total: .+\nWall time: [0-9.]+ (s|ms|\xb5s|ns)\n", re.M)


def test_time_line_magic_times_and_returns_the_value(capfd):
    status, out, err = run(capfd, "%time 6 * 7")
    assert (status, err) == (0, "")
    assert TIMES.match(out) and out.endswith("\n42\n")


def test_time_assigns_in_the_cells_names(capfd):
    glb = namespaces.python_globals()
    status, out, err = run(capfd, "%time y = sum(range(10))\nprint(y)", glb)
    assert (status, err) == (0, "") and out.endswith("\n45\n") and glb["y"] == 45


def test_time_cell_magic_shows_the_last_expression_unless_semicolon(capfd):
    status, out, err = run(capfd, "%%time\nz = 2\nz * 21")
    assert (status, err) == (0, "") and TIMES.match(out) and out.endswith("\n42\n")
    status, out, err = run(capfd, "%%time\nz = 2\nz * 21;")
    # Only the times: a bare "42" test would trip on a wall time of 942 ns.
    assert status == 0 and TIMES.fullmatch(out), out


@pytest.mark.parametrize("code,runs,loops", [
    ("%timeit -n 5 -r 2 sum(range(10))", 2, 5),
    ("%timeit -r1 -n1 sum(range(10))", 1, 1),
    ("%%timeit -n 3 -r 2 a = [1, 2]\nsorted(a)", 2, 3),
])
def test_timeit(capfd, code, runs, loops):
    status, out, err = run(capfd, code)
    assert (status, err) == (0, "")
    assert re.search(r"\xb1 .* per loop \(mean \xb1 std. dev. of %d runs?, %d loops? each\)\n$"
                     % (runs, loops), out), out


def test_timeit_bad_option_is_one_line(capfd):
    status, out, err = run(capfd, "%timeit -x 1")
    assert status == 1 and err.count("\n") == 1 and err.startswith("UsageError: option -x not recognized")


def test_prun_prints_the_profile(capfd):
    status, out, err = run(capfd, "def f():\n    return sum(range(100))\n%prun -l 5 f()")
    assert (status, err) == (0, "")
    assert "function calls" in out and "Ordered by: internal time" in out and "(f)" in out


def test_shell_escape_runs_with_the_cells_fds_and_sets_exit_code(capfd):
    glb = namespaces.python_globals()
    status, out, err = run(capfd, "print('before')\n!echo hi\n!echo oops >&2; exit 3\nprint(_exit_code)", glb)
    assert status == 0 and out == "before\nhi\n3\n" and err == "oops\n"


def test_shell_escape_expands_names_as_ipython(capfd, monkeypatch):
    # {expr} and $name from the cell (and the loop), $$name the shell's $name
    monkeypatch.setenv("SB_T", "env")
    status, out, err = run(capfd, "n = 5\nfor i in range(2):\n    !echo {n + i} $n $$SB_T\n")
    assert (status, err, out) == (0, "", "5 5 env\n6 5 env\n")


def test_getoutput_is_a_list_of_lines(capfd):
    status, out, err = run(capfd, "x = !printf 'a\\nb\\n'; echo e >&2\nprint(list(x), x.n)")
    assert (status, err) == (0, "") and out == "['a', 'b', 'e'] a\nb\ne\n"


def test_help_prints_the_docstring_and_source(capfd):
    status, out, err = run(capfd, "def f(a, b=2):\n    'Add them.'\n    return a + b\nf?")
    assert (status, err) == (0, "")
    assert "Signature: f(a, b=2)\n" in out and "Docstring:\nAdd them.\n" in out and "Type: function" in out
    status, out, err = run(capfd, "import json\njson.dumps??")
    assert status == 0 and "Source:\ndef dumps(" in out
    status, out, err = run(capfd, "nothing_here?")
    assert status == 0 and out == "Object `nothing_here` not found.\n"


@pytest.mark.parametrize("code,why", [
    ("%pip install numpy", "%pip: installing packages is not possible here: the sandbox has no network (the "
                           "user's `network` setting is none;"),
    ("%conda install numpy", "%conda: there is no conda here: use %pip install"),
    ("%load_ext /home/me/ext.py", "%load_ext: there is no IPython shell here"),
    ("%run /etc/passwd", "/etc/passwd is outside the workspace"),
    ("%run ../x.py", "../x.py is outside the workspace"),
    ("%frobnicate 1", "Line magic function `%frobnicate` not found (here: %cd,"),
])
def test_refused_magics_say_why_in_one_line(capfd, tmp_path, monkeypatch, code, why):
    monkeypatch.setattr(magics, "workspace", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capfd, "print('ran')\n" + code)
    assert status == 1 and out == "ran\n"
    assert err.startswith("UsageError: " + why) and err.count("\n") == 1, err


def test_unknown_cell_magic(capfd):
    status, out, err = run(capfd, "%%frobnicate\nprint(1)")
    assert (status, out) == (1, "") and err.startswith("UsageError: Cell magic function `%%frobnicate` not found")


def test_run_a_workspace_file(capfd, tmp_path, monkeypatch):
    monkeypatch.setattr(magics, "workspace", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text("import sys\nk = len(sys.argv)\nprint(__name__, sys.argv[1:])\n")
    glb = namespaces.python_globals()
    status, out, err = run(capfd, "%run s.py a b\nk", glb)
    assert (status, err) == (0, "") and out == "__main__ ['a', 'b']\n3\n"


def test_writefile_and_bash_cells(capfd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capfd, "%%writefile t.txt\nline\n")
    assert (status, out) == (0, "Writing t.txt\n") and (tmp_path / "t.txt").read_text() == "line\n"
    status, out, err = run(capfd, "%%bash\ncat t.txt; echo $((6*7))\n")
    assert (status, out, err) == (0, "line\n42\n", "")


def test_traceback_inside_a_magic_shows_only_user_code(capfd):
    status, out, err = run(capfd, "def f():\n    1/0\n%time f()")
    assert status == 1 and "ZeroDivisionError" in err and "in f\n" in err
    assert "magics.py" not in err and "run_line_magic(" in err  # the cell's line, not the driver's frames


def test_plain_code_never_reaches_the_transformer(capfd, monkeypatch):
    def boom(code):
        raise AssertionError("transformed")
    monkeypatch.setattr(magics, "transform", boom)
    glb = namespaces.python_globals()
    status, out, err = run(capfd, "x = 5 % 3\ny = x != 2\n[x, y]", glb)
    assert (status, out, err) == (0, "[2, False]\n", "") and "get_ipython" not in glb


def test_a_real_syntax_error_is_the_users_own(capfd):
    status, out, err = run(capfd, "x = (1,\n")
    assert status == 1 and "SyntaxError" in err and "get_ipython" not in err
    status, out, err = run(capfd, "!echo hi\nx = (1,\n")
    assert status == 1 and "SyntaxError" in err and "hi" not in out


def test_pasted_prompts_are_stripped(capfd):
    assert run(capfd, ">>> a = 2\n>>> a + 1")[:2] == (0, "3\n")


# -- Sage cells: the magic's code is preparsed as Sage's REPL does

sage_all = pytest.importorskip("sage.all")


@pytest.fixture
def dm():
    from sage.repl.rich_output import get_display_manager
    d = get_display_manager()
    yield d
    del d.preferences.text


def test_sage_time_preparses(capfd):
    status, out, err = run(capfd, "%time factor(2^128+1)", lang="sage")
    assert (status, err) == (0, "") and TIMES.match(out)
    assert out.endswith("\n59649589127497217 * 5704689200685129054721\n")


def test_sage_timeit_preparses(capfd):
    status, out, err = run(capfd, "%timeit -n 2 -r 1 2^10 + 1/3", lang="sage")
    assert (status, err) == (0, "") and "per loop" in out


def test_sage_pasted_doctest(capfd):
    assert run(capfd, "sage: R.<x> = QQ[]\nsage: factor(x^2 - 1)", lang="sage")[:2] == (0, "(x - 1) * (x + 1)\n")


def test_sage_display_modes_last_for_the_process(capfd, dm):
    glb = namespaces.sage_globals()
    status, out, err = run(capfd, "%display latex\nx^2/3", glb, "sage")
    assert (status, out, err) == (0, "\\frac{1}{3} \\, x^{2}\n", "")
    # a later cell of the same process (a session's next call) keeps it
    assert run(capfd, "1/2", glb, "sage")[1] == "\\frac{1}{2}\n"
    assert run(capfd, "print(1/2)", glb, "sage")[1] == "1/2\n"   # print is not display
    out = run(capfd, "%display ascii_art\nsum(x^i for i in range(3))", glb, "sage")[1]
    assert out == " 2        \nx  + x + 1\n"
    out = run(capfd, "%display unicode_art\nsqrt(x)", glb, "sage")[1]
    assert out == "\u221ax\n"
    assert run(capfd, "%display plain\nx^2/3", glb, "sage")[1] == "1/3*x^2\n"
    assert run(capfd, "%display\n", glb, "sage")[1].startswith("Display preferences:")
    status, out, err = run(capfd, "%display nonsense", glb, "sage")
    assert status == 0 and "value must be unset (None) or one of" in out


def test_sage_help_uses_sageinspect(capfd):
    status, out, err = run(capfd, "is_prime?", lang="sage")
    assert (status, err) == (0, "") and out.startswith("Signature: is_prime(n)\nDocstring:\n")
    assert "EXAMPLES:" in out and "arith/misc.py" in out


def test_display_is_sages_only(capfd):
    status, out, err = run(capfd, "%display latex")
    assert status == 1 and err == "UsageError: %display is Sage's magic: it needs a Sage cell\n"


@pytest.mark.parametrize("code", ["%time 1", "!true", "x?"])
def test_magic_syntax_is_not_python_syntax(code):
    # the premise of "transform only what does not compile"
    with pytest.raises(SyntaxError):
        compile(code, "<t>", "exec")
    assert magics.transform(code) is not None


def test_transformer_loads_without_the_ipython_package():
    # loaded from its file: the IPython package (the terminal shell,
    # prompt_toolkit: ~250 ms) is not imported by it
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, %r)\nfrom driver import magics\nassert magics.load()\n"
            "print('IPython' in sys.modules, 'prompt_toolkit' in sys.modules)"
            % os.path.dirname(os.path.dirname(cell.__file__)))
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "False False\n"
