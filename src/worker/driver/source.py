"""A cell's source as the REPL reads it: its name in tracebacks, whether it
ends with ';' (which suppresses the display of its last expression), and
its compiled body and last expression. Used by cell.py and by the magics
(%time displays a last expression as the cell does)."""
import io
import tokenize

# The name of the job's code: in tracebacks, in linecache and as sys.argv[0]
# (what `python3 file.py` would give a script named <cell>).
CELL = "<cell>"


def ends_with_semicolon(src):
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


def compile_cell(src, name=CELL):
    """Compile a cell: (body, expr). expr is the final bare expression, to
    be displayed, or None (no final expression, or a trailing ';')."""
    import ast
    tree = ast.parse(src, name, "exec")
    display = (tree.body and isinstance(tree.body[-1], ast.Expr)
               and not ends_with_semicolon(src))
    if display:
        last = tree.body.pop()
        body = compile(tree, name, "exec")
        expr = compile(ast.Expression(last.value), name, "eval")
        return body, expr
    return compile(tree, name, "exec"), None
