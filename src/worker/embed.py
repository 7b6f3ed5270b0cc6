#!/usr/bin/env python3
"""Turn a text file into a C string constant:
    embed.py [--max-bytes N] IN OUT SYMBOL
--max-bytes: fail the build when the text is longer (the driver reaches the
sandbox as one argv string, and the kernel refuses an exec whose single
argument exceeds MAX_ARG_STRLEN, 32 pages = 131072 bytes with the NUL)."""
import sys

args = sys.argv[1:]
max_bytes = None
if args[:1] == ["--max-bytes"]:
    max_bytes = int(args[1])
    args = args[2:]
src, out, sym = args[:3]
data = open(src, "rb").read()
if b"\0" in data:
    sys.exit(f"{src}: contains a NUL byte")
if max_bytes is not None and len(data) > max_bytes:
    sys.exit(f"{src}: {len(data)} bytes, more than the {max_bytes} that fit in one argv string "
             "(MAX_ARG_STRLEN): pass the driver another way (e.g. a bootstrap on argv that reads the "
             "rest from stdin) or make it smaller")
with open(out, "w") as f:
    f.write("/* generated from %s by embed.py: do not edit */\n" % src)
    if max_bytes is not None:
        f.write("/* %d bytes of at most %d */\n" % (len(data), max_bytes))
    f.write("const char %s[] =\n" % sym)
    for line in data.splitlines(keepends=True):
        esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\?' else "\\%03o" % ord(c)
                      for c in line.decode("utf-8", "strict").encode("utf-8").decode("latin-1"))
        f.write('\t"%s"\n' % esc)
    f.write(";\n")
