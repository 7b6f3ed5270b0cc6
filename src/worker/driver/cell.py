"""How one job's code runs, the same in a fresh sandbox and in a warm
worker's child: a shell script is exec'd; Sage code is preparsed as `sage
-q file.sage` does (R.<x> = QQ[] works); when the last statement of a Sage
or Python cell is a bare expression, its value is displayed as the REPL
does (a graphic as a figure; text as Sage's %display says), and a trailing
';' suppresses that. Figures still open when the cell ends are sent too
(figures.py). A cell that does not compile is tried again with its IPython
and Sage REPL syntax (%time, !cmd, x?) made Python (magics.py)."""
import os
import sys

from . import display, figures, interact, magics, pipenv
from .namespaces import python_globals
from .source import CELL, compile_cell
from .tracebacks import print_user_traceback

# The shell script's file, in the job's work dir ($0 of the script).
SHELL_SCRIPT = ".sagebox-script.sh"


def show(value):
    """Display a value as the REPL does (and keep it in builtins._): a
    Sage object or any value under %display latex through Sage's display
    manager (display.py), a matplotlib figure as a figure, anything else as
    its repr (also sent as a text item)."""
    if value is None or interact.is_interact_function(value):
        return  # (interact(f) returns f: its controls are what it shows)
    import builtins
    builtins._ = value
    if figures.display(value) or display.show(value):
        return
    text = magics.display_text(value)
    text = repr(value) if text is None else text
    display.print_shown(text)
    display.text_item(text)


def run_cell(src, glb, name=CELL, loc=None, repl=None):
    """Run src in glb. Returns the process exit status it asks for. With
    loc, the cell's own top-level names go there and glb is only read (as
    exec's locals: a function the cell defines does not see them). When
    src does not compile, repl() gives it with its REPL syntax made Python
    (or None: the error stands)."""
    import linecache
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    try:
        try:
            body, expr = compile_cell(src, name)
        except SyntaxError:
            alt = repl() if repl is not None else None
            if alt is None:
                raise
            src = alt
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)
            body, expr = compile_cell(src, name)
        exec(body, glb, loc)
        if expr is not None:
            show(eval(expr, glb, loc))
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(str(code) + "\n")
        return 1
    except BaseException:
        print_user_traceback()
        return 1
    finally:
        # Figures left open are shown even when the cell failed after
        # drawing them (as Jupyter does).
        try:
            figures.flush_open()
        except BaseException:
            print_user_traceback()
        try:
            sys.stdout.flush()
        except Exception:
            pass
    return 0


def sage_preparse(src):
    from sage.repl.preparse import preparse_file
    return preparse_file(src)


def repl_source(lang, code, glb):
    """The cell with its IPython / Sage REPL syntax made Python, Sage
    preparsed after that as Sage's REPL does, and get_ipython() in glb; or
    None when it has no such syntax."""
    alt = magics.transform(code)
    if alt is None:
        return None
    magics.install(glb, lang)
    return sage_preparse(alt) if lang == "sage" else alt


def run_source(lang, code, glb, name=CELL):
    """Run a Sage (preparsed) or Python cell in glb: run_cell, with its
    REPL syntax when it has some. A session names each call's cell after
    the call ("<cell 3>"), so that tracebacks of functions defined in
    earlier calls show their own lines; Python in a Sage session is not
    preparsed. glb None: there are no globals to run in (Sage did not
    import), exit status 1."""
    if glb is None:
        return 1
    pipenv.refresh()  # what pip installed before this call imports now
    if lang == "sage":
        try:
            src = sage_preparse(code)
        except Exception:
            print_user_traceback()
            return 1
    else:
        src = code
    return run_cell(src, glb, name, repl=lambda: repl_source(lang, code, glb))


# sympow's data cache, under DOT_SAGE: the sandbox's own writable space.
# Its default, the host's world-writable /var/cache/sympow, stays out (it
# would be a channel between sandboxes). sympow creates only the last level
# (datafiles/le64): without DIR/datafiles it warns on every call ("failed to
# create data bin package cache folder") and rebuilds its data.
SYMPOW_CACHE = os.path.join("sympow", "datafiles")


def prepare_dirs():
    """HOME, DOT_SAGE and sympow's cache exist (the backend starts us in
    the work dir); every job inherits SYMPOW_PKGCACHEDIR."""
    for d in (os.environ.get("HOME"), os.environ.get("DOT_SAGE")):
        if d:
            os.makedirs(d, mode=0o700, exist_ok=True)
    dot = os.environ.get("DOT_SAGE")
    if dot and "SYMPOW_PKGCACHEDIR" not in os.environ:
        cache = os.path.join(dot, SYMPOW_CACHE)
        os.makedirs(cache, mode=0o700, exist_ok=True)
        os.environ["SYMPOW_PKGCACHEDIR"] = os.path.dirname(cache)


def set_job_argv():
    """The job sees the argv of `python3 <cell>`, not the driver's
    (`-c once python` made argparse fail on 'unrecognized arguments')."""
    sys.argv = [CELL]
    sys.orig_argv = [sys.executable or "python3", CELL]
    # (the job starts in its work dir: %run reads only files under it)
    magics.workspace = os.getcwd()


def exec_shell(argv, env=None):
    """Exec a shell with the signals as a fresh process has them. Python
    ignores SIGPIPE and SIGXFSZ for itself, and an ignored signal survives
    execve: `while true; do echo y; done | head -1` then never ended (the
    writer looped on "write error: Broken pipe" up to the output limit),
    and a write past the file-size limit failed instead of killing."""
    import signal
    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    os.execve(argv[0], argv, os.environ if env is None else env)


def run_code(lang, code, shell, make_sage_globals):
    """Run one job's code in this process: a shell script is exec'd from
    the work dir ($0 is the script's path, as `sh file.sh` gives); Sage is
    preparsed and run in make_sage_globals() (None: cannot, exit 1); Python
    runs in fresh globals."""
    if lang == "shell":
        path = os.path.join(os.getcwd(), SHELL_SCRIPT)
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        exec_shell([shell, path])
    set_job_argv()
    glb = make_sage_globals() if lang == "sage" else python_globals()
    return run_source(lang, code, glb)
