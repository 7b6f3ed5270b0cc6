#!/usr/bin/env python3
"""Turn a text file into a C string constant: embed.py IN OUT SYMBOL."""
import sys

src, out, sym = sys.argv[1:4]
data = open(src, "rb").read()
if b"\0" in data:
    sys.exit(f"{src}: contains a NUL byte")
with open(out, "w") as f:
    f.write("/* generated from %s by embed.py: do not edit */\n" % src)
    f.write("const char %s[] =\n" % sym)
    for line in data.splitlines(keepends=True):
        esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\?' else "\\%03o" % ord(c)
                      for c in line.decode("utf-8", "strict").encode("utf-8").decode("latin-1"))
        f.write('\t"%s"\n' % esc)
    f.write(";\n")
