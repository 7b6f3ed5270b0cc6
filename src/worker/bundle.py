#!/usr/bin/env python3
"""Join the driver's modules into one Python source for `python3 -c`:
    bundle.py OUT MODULE.py...      (the modules of the package driver/)

The modules travel zlib-compressed and base64-encoded inside a small
loader, which registers them as the package `sagebox_driver` (a finder on
sys.meta_path: each module is compiled when first imported, so the fresh
path never compiles the warm worker's modules) and calls
sagebox_driver.main.main(sys.argv[1:]). Compressed, the driver uses about a
third of what it would as text of the kernel's limit for one argv string
(MAX_ARG_STRLEN, 128 KiB; embed.py --max-bytes checks it), leaving room to
grow. The test suite imports the same modules from the source tree."""
import base64
import os
import sys
import zlib

PACKAGE = "sagebox_driver"

LOADER = '''\
# sagebox driver, bundled by src/worker/bundle.py from src/worker/driver/
import sys
def _sagebox_driver(blob):
    import base64, importlib.util, zlib
    parts = zlib.decompress(base64.b64decode(blob)).decode("utf-8").split("\\0")
    src = dict(zip(parts[0::2], parts[1::2]))
    pkg = %(pkg)r
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
            exec(compile(src[mod], "<%%s/%%s.py>" %% (pkg, mod), "exec"), module.__dict__)
    sys.meta_path.insert(0, Finder())
    return __import__(pkg + ".main", fromlist=["main"])
_sagebox_driver(b"""
%(blob)s""").main(sys.argv[1:])
'''


def bundle(paths):
    parts = []
    for p in paths:
        name = os.path.splitext(os.path.basename(p))[0]
        text = open(p, encoding="utf-8").read()
        if "\0" in text:
            sys.exit(f"{p}: contains a NUL byte")
        compile(text, p, "exec")  # a syntax error fails the build, not a job
        parts += [name, text]
    if "main" not in parts[0::2]:
        sys.exit("bundle.py: no main.py among the modules")
    blob = base64.b64encode(zlib.compress("\0".join(parts).encode("utf-8"), 9)).decode("ascii")
    lines = "\n".join(blob[i:i + 76] for i in range(0, len(blob), 76))
    return LOADER % {"pkg": PACKAGE, "blob": lines}


if __name__ == "__main__":
    out, *mods = sys.argv[1:]
    with open(out, "w", encoding="utf-8") as f:
        f.write(bundle(mods))
