"""IPython and Sage REPL syntax in Sage and Python cells, as Sage's own REPL
(IPython with Sage's preparser after IPython's transforms) takes it:
%line and %%cell magics, !cmd and x = !cmd, x? and x??, and pasted
`sage: ` / `>>> ` prompts.

IPython's own transformer (IPython.core.inputtransformer2, which ships with
Sage: IPython 8.5 beside Debian 12's Sage 9.5) turns that syntax into calls
of get_ipython().run_line_magic(...), .run_cell_magic(...), .system(...)
and .getoutput(...). A cell is transformed only when it does not compile as
it is (that syntax is never valid Python), so plain code pays nothing; the
transformer is loaded once in the warm worker and the session's controller
(load()), before they fork. get_ipython() is Shell below: the magics that
make sense in a sandbox, and a one-line UsageError saying why for those that
do not (no IPython kernel, nothing outside the workspace; %pip without
network)."""
import os
import sys

from . import namespaces, pinfo, pipenv, tracebacks
from .magic_args import UsageError, parse_options
from .source import ends_with_semicolon
from .timing import TimingMagics

# Sage's prompt stripper (sage.repl.interpreter.SagePromptTransformer, an
# IPython PromptStripper with this pattern), so a pasted doctest runs.
SAGE_PROMPT = r'^(\s*(:?sage: |\.\.\.\.: ))+'

_it2 = None    # IPython.core.inputtransformer2, or False: not found
_text = None   # IPython.utils.text (DollarFormatter, SList): text(), on first use
_tm = None     # the TransformerManager, with Sage's prompt stripper

# The cell's work dir at the start of the job (stateless) or the session's
# workspace: %run and %runfile read only files under it (set by cell.py).
workspace = None


def _load_ipython_file(rel, name):
    """One module of IPython's, loaded from its file without importing the
    IPython package (whose __init__ imports the terminal shell and
    prompt_toolkit: ~250 ms; these modules import only the standard
    library). Falls back to the ordinary import."""
    import importlib.util
    spec = importlib.util.find_spec("IPython")
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), *rel.split("/"))
    try:
        s = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
        return mod
    except Exception:
        import importlib
        return importlib.import_module("IPython." + rel[:-3].replace("/", "."))


def _ipython_module(rel, name):
    """_load_ipython_file's module, or False when it cannot be loaded."""
    try:
        return _load_ipython_file(rel, name) or False
    except Exception:
        return False


def load():
    """Load IPython's transformer (once; a process that forks jobs calls
    this first). False when IPython is not installed."""
    global _it2, _tm
    if _it2 is None:
        _it2 = _ipython_module("core/inputtransformer2.py", "_sagebox_ipython_it2")
        if _it2:
            import re
            _tm = _it2.TransformerManager()
            _tm.cleanup_transforms.insert(0, _it2.PromptStripper(prompt_re=re.compile(SAGE_PROMPT)))
            _tm.transform_cell("%time x?\n")  # its own first-use costs, paid here
    return _it2 is not False


def text():
    """IPython's text helpers, loaded by the first job that needs them (a
    !cmd), not by the worker: they import pathlib, typing and urllib
    (~0.7 MB that every fork of the worker would copy and tear down;
    docs/WARM.md). None when IPython is missing."""
    global _text
    if _text is None:
        _text = _ipython_module("utils/text.py", "_sagebox_ipython_text")
    return _text or None


def transform(code):
    """The cell with its IPython syntax made Python, or None when it has
    none (or IPython is missing)."""
    if not load():
        return None
    try:
        out = _tm.transform_cell(code)
    except Exception:
        return None
    return None if out.rstrip("\n") == code.rstrip("\n") else out


def install(glb, lang):
    """Give the cell's namespace get_ipython(), as IPython's user namespace
    has it."""
    shell = getattr(glb.get("get_ipython"), "__self__", None)
    if not isinstance(shell, Shell) or shell.glb is not glb:
        shell = Shell(glb, lang)
        glb["get_ipython"] = shell.get_ipython
    shell.lang = lang  # (a session's Python call in a Sage session)


class SList(list):
    """The lines of x = !cmd: IPython's SList (.n .s .l .grep ...) when
    IPython is there."""


class Shell(TimingMagics):
    """What get_ipython() returns in a cell: the magics this sandbox runs."""

    def __init__(self, glb, lang):
        self.glb, self.lang = glb, lang

    def get_ipython(self):
        return self

    # -- code in the user's namespace
    def _source(self, code):
        """Sage code preparsed as Sage's REPL does it inside %time and
        %timeit (its shell.transform_cell: IPython's transforms, then
        Sage's preparser)."""
        alt = transform(code)
        if alt is not None:
            code = alt
        if self.lang == "sage":
            from sage.repl.preparse import preparse
            code = preparse(code)
        return code

    def _name(self, code):
        """A cell-like name for code a magic runs, in linecache, so that
        its traceback shows the user's lines."""
        import linecache
        name = "<cell magic %d>" % len(linecache.cache)
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        return name

    def _split_last(self, code, name):
        """(body, expr): as IPython's %time, an expression alone or a last
        expression is evaluated and returned (the cell displays it)."""
        import ast
        tree = compile(code, name, "exec", ast.PyCF_ONLY_AST)
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = tree.body.pop()
            if not ends_with_semicolon(code):
                return tree, ast.Expression(last.value)
            tree.body.append(last)
        return tree, None

    # -- the transformer's entry points
    def run_line_magic(self, magic_name, line, _stack_depth=1):
        fn = getattr(self, "line_" + magic_name, None)
        if fn is None:
            self._refuse("%", magic_name, "Line")
        return fn(line)

    def run_cell_magic(self, magic_name, line, cell):
        fn = getattr(self, "cell_" + magic_name, None)
        if fn is None:
            self._refuse("%%", magic_name, "Cell")
        return fn(line, cell)

    def _refuse(self, prefix, name, kind):
        why = REFUSED.get(name)
        if why is not None:
            raise UsageError("%s%s: %s" % (prefix, name, why))
        have = sorted(n[len(kind) + 1:] for n in dir(self) if n.startswith(kind.lower() + "_"))
        raise UsageError("%s magic function `%s%s` not found (here: %s)."
                         % (kind, prefix, name, ", ".join(prefix + n for n in have)))

    def _expand(self, cmd, depth):
        """$name and {expr} from the user's names (and the calling
        function's), as IPython's var_expand; left as is when they do not
        expand."""
        t = text()
        if not t:
            return cmd
        ns = dict(self.glb)
        try:
            ns.update(sys._getframe(depth + 1).f_locals)
        except ValueError:
            pass
        try:
            return t.DollarFormatter().vformat(cmd, args=[], kwargs=ns)
        except Exception:
            return cmd

    def system(self, cmd):
        """!cmd: run in the sandbox by $SHELL (or /bin/sh) with the cell's
        stdout and stderr; its status in _exit_code (-N for signal N)."""
        import subprocess
        cmd = self._expand(cmd, 1)
        for f in (sys.stdout, sys.stderr):
            f.flush()
        try:
            ec = subprocess.call(cmd, shell=True, executable=os.environ.get("SHELL") or None)
        except KeyboardInterrupt:
            sys.stderr.write("\nKeyboardInterrupt\n")
            ec = -2
        if ec > 128:
            ec = -(ec - 128)
        self.glb["_exit_code"] = ec
        pipenv.refresh()  # (!pip install: importable in this cell)

    def getoutput(self, cmd, split=True, depth=0):
        """x = !cmd: its output (stdout and stderr) as a list of lines."""
        import subprocess
        cmd = self._expand(cmd, depth + 1)
        for f in (sys.stdout, sys.stderr):
            f.flush()
        p = subprocess.run(cmd, shell=True, executable=os.environ.get("SHELL") or None,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        pipenv.refresh()
        out = p.stdout.decode("utf-8", "replace")
        if not split:
            return out
        t = text()
        return (t.SList if t else SList)(out.splitlines())

    # -- help
    def _pinfo(self, name, source):
        name = name.strip()
        if name.startswith("%"):
            fn = (getattr(self, "cell_" + name[2:], None) if name.startswith("%%")
                  else getattr(self, "line_" + name[1:], None))
            print(fn.__doc__ if fn is not None else "Object `%s` not found." % name)
            return
        try:
            obj = eval(name, self.glb)
        except Exception:
            print("Object `%s` not found." % name)
            return
        pinfo.show(obj, source, self.lang == "sage")

    def line_pinfo(self, line):
        """x?: the docstring, signature, type and file of x."""
        self._pinfo(line, False)

    def line_pinfo2(self, line):
        """x??: the source of x, or its docstring."""
        self._pinfo(line, True)

    def show_usage(self):
        """A bare `?`: what this cell understands."""
        print("IPython and Sage REPL syntax here: x? and x?? for help, !cmd, x = !cmd, and the magics "
              + ", ".join("%" + n[5:] for n in sorted(dir(self)) if n.startswith("line_")) + ", "
              + ", ".join("%%" + n[5:] for n in sorted(dir(self)) if n.startswith("cell_")) + ".")

    def set_next_input(self, text, replace=False):
        """(IPython puts `x?`'s line back at the prompt; there is none here.)"""

    def line_psearch(self, line):
        """a*b?: the names of the namespace that match a wildcard."""
        import fnmatch
        pattern = line.split()[0] if line.split() else "*"
        for n in sorted(k for k in self.glb if fnmatch.fnmatchcase(k, pattern)):
            print(n)

    # -- Sage's %display
    def line_display(self, line):
        """%display [plain|latex|ascii_art [width]|unicode_art [width]|default]:
        how the cell's value is shown from now on (Sage's magic; in a
        session it lasts, as in Sage's REPL)."""
        if self.lang != "sage":
            raise UsageError("%display is Sage's magic: it needs a Sage cell")
        from sage.repl.rich_output import get_display_manager
        dm = get_display_manager()
        args = line.split()
        if not args:
            print(dm.preferences)
            return
        arg0 = args[0]
        # the logic of sage.repl.ipython_extension.SageMagics.display
        if arg0 == "simple":
            dm.preferences.text = "plain"
        elif arg0 == "typeset":
            dm.preferences.text = "latex"
        elif arg0 in ("ascii_art", "unicode_art") and len(args) > 1:
            try:
                width = int(args[1])
            except ValueError:
                width = 0
            if width <= 0:
                raise ValueError("max width must be a positive integer")
            import sage.typeset.character_art as character_art
            character_art.MAX_WIDTH = width
            dm.preferences.text = arg0
        elif arg0 in ("default", "None"):
            for option in map(str, dm.preferences.available_options()):
                delattr(dm.preferences, option)
        elif arg0 in map(str, dm.preferences.available_options()) and len(args) <= 2:
            if len(args) == 1:
                print(getattr(dm.preferences, arg0))
            elif args[1] in ("default", "None"):
                delattr(dm.preferences, arg0)
            else:
                try:
                    setattr(dm.preferences, arg0, args[1])
                except ValueError as err:
                    print(err)
        else:
            try:
                dm.preferences.text = arg0
            except ValueError as err:
                print(err)

    # -- files and the environment
    def _workspace_file(self, path):
        if not path:
            raise UsageError("a file name is needed")
        real = os.path.realpath(path)
        base = os.path.realpath(workspace or os.getcwd())
        if os.path.commonpath([real, base]) != base:
            raise UsageError("%s is outside the workspace (%s): only the workspace's files can be run here"
                             % (path, base))
        if not os.path.isfile(real):
            raise UsageError("%s: no such file in the workspace" % path)
        return real

    def line_run(self, line):
        """%run [-i] file.py|file.sage [args]: run a workspace file as a
        script (its names then join the cell's; -i: in the cell's names)."""
        import shlex
        opts, rest = parse_options(line, "i")
        try:
            words = shlex.split(rest)
        except ValueError as e:
            raise UsageError(str(e))
        path = self._workspace_file(words[0] if words else "")
        with open(path, encoding="utf-8") as f:
            code = f.read()
        if path.endswith(".sage"):
            if self.lang != "sage":
                raise UsageError("%s is Sage code: run it from a Sage cell" % words[0])
            from sage.repl.preparse import preparse_file
            code = preparse_file(code)
        if "i" in opts:
            ns = self.glb
        else:
            ns = namespaces.sage_globals() if self.lang == "sage" else namespaces.python_globals()
            ns["__file__"] = path
        argv = sys.argv
        sys.argv = words
        try:
            exec(compile(code, path, "exec"), ns)
        except SystemExit as e:
            if e.code not in (None, 0):
                raise
        finally:
            sys.argv = argv
            if ns is not self.glb:
                self.glb.update((k, v) for k, v in ns.items() if not k.startswith("__"))

    def line_runfile(self, line):
        """%runfile file: Sage's load() of a workspace file."""
        path = self._workspace_file(line.strip())
        if self.lang != "sage":
            raise UsageError("%runfile is Sage's magic: it needs a Sage cell")
        from sage.repl.load import load
        load(path, self.glb)

    def cell_writefile(self, line, cell):
        """%%writefile [-a] file: write (or append) the cell's body."""
        opts, name = parse_options(line, "a")
        name = name.strip()
        if not name:
            raise UsageError("%%writefile needs a file name")
        exists = os.path.exists(name)
        print("%s %s" % ("Appending to" if "a" in opts else ("Overwriting" if exists else "Writing"), name))
        with open(name, "a" if "a" in opts else "w", encoding="utf-8") as f:
            f.write(cell)

    def _script(self, argv, cell):
        import subprocess
        for f in (sys.stdout, sys.stderr):
            f.flush()
        ec = subprocess.run(argv, input=cell.encode("utf-8")).returncode
        pipenv.refresh()
        return ec

    def cell_bash(self, line, cell):
        """%%bash: the cell's body, run by bash in the sandbox."""
        self._script(["bash"], cell)

    def cell_sh(self, line, cell):
        """%%sh: the cell's body, run by sh in the sandbox."""
        self._script(["sh"], cell)

    def line_pip(self, line):
        """%pip ARGS: pip for this interpreter's Python (with the user's
        `network` list set: `%pip install NAME` installs into the
        workspace's .local, importable at once)."""
        if not pipenv.enabled():
            raise UsageError("%pip: " + NO_NETWORK)
        import shlex
        try:
            args = shlex.split(self._expand(line, 2))
        except ValueError as e:
            raise UsageError("%pip: " + str(e))
        # A failed pip fails the cell (IPython's %pip would not say it).
        if self._script([sys.executable or "python3", "-m", "pip", *args], "") != 0:
            raise UsageError("%pip: pip failed (its messages are above)")

    def line_cd(self, line):
        """%cd DIR: change the working directory (printed, as IPython)."""
        path = os.path.expanduser(line.strip() or "~")
        try:
            os.chdir(path)
        except OSError as e:
            raise UsageError("%cd: " + str(e))
        print(os.getcwd())

    def line_pwd(self, line):
        """%pwd: the working directory."""
        return os.getcwd()

    def line_env(self, line):
        """%env, %env VAR, %env VAR=value (or VAR value)."""
        line = line.strip()
        if not line:
            return dict(os.environ)
        if "=" in line or " " in line:
            sep = "=" if "=" in line else " "
            k, _, v = line.partition(sep)
            os.environ[k.strip()] = v.strip()
            print("env: %s=%s" % (k.strip(), v.strip()))
            return None
        if line not in os.environ:
            raise UsageError("Environment does not have key: %s" % line)
        return os.environ[line]

    def line_matplotlib(self, line):
        """%matplotlib [inline]: nothing to do, figures are always shown."""
        return None


# %pip without network (pipenv.py): the user's setting, named.
NO_NETWORK = ("installing packages is not possible here: the sandbox has no network (the user's `network` "
              "setting is none; with the package index in that list, pip install works)")

# Magics that do not run here, and why (one line each: the cell fails with it).
REFUSED = {
    "conda": "there is no conda here: use %pip install (with the user's `network` setting allowing the index)",
    "mamba": "there is no mamba here: use %pip install (with the user's `network` setting allowing the index)",
    "load_ext": "there is no IPython shell here to load an extension into: import the module instead",
    "reload_ext": "there is no IPython shell here: import the module instead",
    "unload_ext": "there is no IPython shell here: import the module instead",
    "config": "there is no IPython shell here to configure",
    "attach": "attach reloads files between REPL inputs, which do not exist here: use load('file')",
    "load": "%load puts a file into the next REPL input, which does not exist here: use load('file') or %run",
    "edit": "there is no editor or terminal here",
    "debug": "there is no terminal here to debug in",
    "pdb": "there is no terminal here to debug in",
    "history": "there is no REPL history here",
    "gui": "there is no display here: figures are sent as PNGs",
    "qtconsole": "there is no display here",
    "connect_info": "there is no IPython kernel here",
    "logstart": "there is no REPL log here",
    "cython": "compiling Cython needs a compiler and a writable Sage tree, which the sandbox does not give",
    "fortran": "compiling Fortran needs a compiler, which the sandbox does not give",
}


# A traceback through a magic that ran the cell (%time) shows the cell's
# frames, not this file's.
tracebacks.hide_frames_of(Shell.system.__code__.co_filename)


def display_text(value):
    """The text of a cell's value under Sage's %display preference (latex:
    its LaTeX, ascii_art, unicode_art), or None: its repr."""
    dm_mod = sys.modules.get("sage.repl.rich_output.display_manager")
    if dm_mod is None:
        return None
    want = dm_mod.get_display_manager().preferences.text
    if want in (None, "plain"):
        return None
    if want == "latex":
        from sage.misc.latex import latex
        return str(latex(value))
    if want == "ascii_art":
        from sage.typeset.ascii_art import ascii_art
        return str(ascii_art(value))
    if want == "unicode_art":
        from sage.typeset.unicode_art import unicode_art
        return str(unicode_art(value))
    return None
