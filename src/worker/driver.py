# sagebox driver: runs INSIDE the sandbox, never on the host.
#
#   python3 -I -c <this source> once LANG [SHELL]
#       Read the job's code from stdin until EOF, then run it as LANG
#       (sage, python or shell) in this process, the seed's way: one
#       sandbox per call.
#
# Sage code is preparsed as `sage -q file.sage` does (R.<x> = QQ[] works).
# When the last statement of a Sage or Python cell is a bare expression, its
# value is displayed as the REPL does; a trailing ';' suppresses that.
import ast
import io
import os
import sys
import tokenize

CELL = "<cell>"


def _read_all(fd):
    chunks = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _ends_with_semicolon(src):
    """True when the last significant token of src is ';'."""
    last = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT,
                            tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
                continue
            last = tok
    except (tokenize.TokenError, SyntaxError):
        return False
    return last is not None and last.type == tokenize.OP and last.string == ";"


def compile_cell(src):
    """Compile a cell; a final bare expression is displayed."""
    tree = ast.parse(src, CELL, "exec")
    display = (tree.body and isinstance(tree.body[-1], ast.Expr)
               and not _ends_with_semicolon(src))
    if display:
        last = tree.body.pop()
        body = compile(tree, CELL, "exec")
        expr = compile(ast.Expression(last.value), CELL, "eval")
        return body, expr
    return compile(tree, CELL, "exec"), None


def _show(value):
    if value is None:
        return
    import builtins
    builtins._ = value
    sys.stdout.write(repr(value) + "\n")


def _print_user_traceback():
    import traceback
    etype, value, tb = sys.exc_info()
    # Skip the driver's own frames: show the user only their code.
    while tb is not None and tb.tb_frame.f_code.co_filename != CELL:
        tb = tb.tb_next
    traceback.print_exception(etype, value, tb)


def run_cell(src, glb):
    """Run src in glb. Returns the process exit status it asks for."""
    import linecache
    linecache.cache[CELL] = (len(src), None, src.splitlines(True), CELL)
    try:
        body, expr = compile_cell(src)
        exec(body, glb)
        if expr is not None:
            _show(eval(expr, glb))
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(str(code) + "\n")
        return 1
    except BaseException:
        _print_user_traceback()
        return 1
    finally:
        try:
            sys.stdout.flush()
        except Exception:
            pass
    return 0


def sage_globals():
    # What `sage -q` gives a script: everything of sage.all_cmdline.
    import sage.all_cmdline as allc
    glb = {k: v for k, v in vars(allc).items() if not k.startswith("__")}
    glb["__name__"] = "__main__"
    glb["__builtins__"] = __builtins__
    return glb


def python_globals():
    return {"__name__": "__main__", "__builtins__": __builtins__}


def sage_preparse(src):
    from sage.repl.preparse import preparse_file
    return preparse_file(src)


def prepare_dirs():
    # The backend starts us in the job's working directory.
    for d in (os.environ.get("HOME"), os.environ.get("DOT_SAGE")):
        if d:
            os.makedirs(d, mode=0o700, exist_ok=True)


def run_once(lang, shell):
    code = _read_all(0).decode("utf-8", "replace")
    # The user's code gets an empty stdin, not the channel its code came on.
    devnull = os.open("/dev/null", os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    prepare_dirs()
    if lang == "shell":
        path = os.path.join(os.getcwd(), ".sagebox-script.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(code)
        os.execv(shell, [shell, path])
    if lang == "sage":
        glb = sage_globals()
        try:
            src = sage_preparse(code)
        except Exception:
            _print_user_traceback()
            return 1
    else:
        glb = python_globals()
        src = code
    return run_cell(src, glb)


def main(argv):
    if len(argv) >= 2 and argv[0] == "once":
        shell = argv[2] if len(argv) > 2 else "/bin/sh"
        sys.exit(run_once(argv[1], shell))
    sys.stderr.write("sagebox driver: usage: once LANG [SHELL]\n")
    sys.exit(125)


main(sys.argv[1:])
