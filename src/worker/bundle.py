#!/usr/bin/env python3
"""Join the driver's modules into one Python source for `python3 -c`:
    bundle.py OUT MODULE.py...      (the modules of the package driver/)

The modules travel zlib-compressed and base64-encoded inside a small
loader, which registers them as the package `sagebox_driver` (a finder on
sys.meta_path: each module is compiled when first imported, so the fresh
path never compiles the warm worker's modules) and calls
sagebox_driver.main.main(sys.argv[1:]). The modules' comments are left
out (each line stays, so a traceback's line numbers are the source's; the
docstrings stay: %magic? prints some). Compressed, the driver is less than
half its text (~113 KB, the loader and the native helpers included,
for ~300 KB of modules), under the kernel's limit for one argv
string (MAX_ARG_STRLEN, 128 KiB; embed.py --max-bytes checks it). The test
suite imports the same modules from the source tree.

Compiling the modules costs every sandbox start ~15-20 ms (a warm worker,
a fresh call, a session). With SAGEBOX_DRIVER_CODE naming a file the host
made with `python3 -I -c <bundle> code-cache DIR NAME` (the same Python,
outside any sandbox: src/runner/warm/driver_code.c), the loader takes the modules'
code objects from it instead, when its first line names this very blob
(BLOB_ID) and this Python's bytecode (importlib's MAGIC_NUMBER); any
other file, or one that does not load, is ignored and the modules are
compiled as before."""
import base64
import hashlib
import io
import os
import sys
import tokenize
import zlib

PACKAGE = "sagebox_driver"

CODE_CACHE_MAGIC = b"sagebox-driver-code"

LOADER = '''\
# sagebox driver, bundled by src/worker/bundle.py from src/worker/driver/
import sys
def _sagebox_driver(blob):
    import base64, importlib.util, marshal, os, zlib
    parts = zlib.decompress(base64.b64decode(blob)).decode("utf-8").split("\\0")
    src = dict(zip(parts[0::2], parts[1::2]))
    pkg = %(pkg)r
    head = b"%(magic)s %(blob_id)s " + importlib.util.MAGIC_NUMBER.hex().encode() + b"\\n"
    if len(sys.argv) == 4 and sys.argv[1] == "code-cache":
        # code-cache DIR NAME: run by the host, outside any sandbox, before
        # any job (src/runner/warm/driver_code.c); the file appears whole or not
        # at all, even when sagebox is gone before it is done.
        code = {m: compile(s, "<%%s/%%s.py>" %% (pkg, m), "exec") for m, s in src.items()}
        tmp = os.path.join(sys.argv[2], ".tmp-%%d" %% os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as f:
            os.fchmod(fd, 0o644)  # (whatever the umask: the sandbox user reads it)
            f.write(head + marshal.dumps(code))
        os.replace(tmp, os.path.join(sys.argv[2], sys.argv[3]))
        sys.exit(0)
    code = {}
    path = os.environ.pop("SAGEBOX_DRIVER_CODE", None)  # (not for the jobs)
    if path:
        try:
            with open(path, "rb") as f:
                data = f.read()
            if data.startswith(head):
                code = marshal.loads(data[len(head):])
            if not isinstance(code, dict) or any(type(c) is not type(_sagebox_driver.__code__) for c in code.values()):
                code = {}
        except Exception:
            code = {}
    class Finder:
        def find_spec(self, name, path=None, target=None):
            mod = "__init__" if name == pkg else name[len(pkg) + 1:]
            if (name == pkg or name.startswith(pkg + ".")) and mod in src:
                return importlib.util.spec_from_loader(name, self, is_package=name == pkg)
            return None
        def create_module(self, spec):
            return None
        def exec_module(self, module):
            mod = "__init__" if module.__name__ == pkg else module.__name__[len(pkg) + 1:]
            c = code.pop(mod, None)
            if c is None:
                c = compile(src[mod], "<%%s/%%s.py>" %% (pkg, mod), "exec")
            exec(c, module.__dict__)
    cached = bool(code)
    sys.meta_path.insert(0, Finder())
    main = __import__(pkg + ".main", fromlist=["main"])
    sys.modules[pkg].CODE_CACHED = cached  # (said in the ready frame: driver_code())
    return main
_sagebox_driver(b"""
%(blob)s""").main(sys.argv[1:])
'''


def without_comments(text):
    """text with every comment removed and each line kept."""
    lines = text.splitlines(True)
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(text).readline))):
        if tok.type == tokenize.COMMENT:
            (row, col), line = tok.start, lines[tok.start[0] - 1]
            lines[row - 1] = line[:col].rstrip() + line[tok.end[1]:]
    return "".join(lines)


def bundle(paths):
    parts = []
    for p in paths:
        name = os.path.splitext(os.path.basename(p))[0]
        text = open(p, encoding="utf-8").read()
        if "\0" in text:
            sys.exit(f"{p}: contains a NUL byte")
        compile(text, p, "exec")  # a syntax error fails the build, not a job
        stripped = without_comments(text)
        compile(stripped, p, "exec")
        parts += [name, stripped]
    if "main" not in parts[0::2]:
        sys.exit("bundle.py: no main.py among the modules")
    blob = base64.b64encode(zlib.compress("\0".join(parts).encode("utf-8"), 9)).decode("ascii")
    lines = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
    # Which driver a code cache was made from (its modules and this loader):
    # another build's is never taken for this one.
    blob_id = hashlib.sha256((LOADER + blob).encode("utf-8")).hexdigest()[:32]
    return LOADER % {"pkg": PACKAGE, "blob": lines, "magic": CODE_CACHE_MAGIC.decode(), "blob_id": blob_id}


if __name__ == "__main__":
    out, *mods = sys.argv[1:]
    with open(out, "w", encoding="utf-8") as f:
        f.write(bundle(mods))
