#!/usr/bin/env python3
"""Make the viewer one self-contained HTML page (no network: the MCP Apps
extension's default CSP allows inline scripts and styles only):
    assemble.py OUT TEMPLATE VIEWER_JS VIEWER_CSS THREE_JS ORBIT_JS KATEX_JS KATEX_CSS
Each /*@NAME@*/ marker of the template is replaced by a file's text. KaTeX's
@font-face rules are dropped: the default CSP has no font-src, so the fonts
could not load anyway, and a request for them would be one to the network
(formulas use the system's fonts and the MathML KaTeX writes next to them)."""
import re
import sys

out, template, *parts = sys.argv[1:]
names = ["VIEWER_JS", "VIEWER_CSS", "THREE_JS", "ORBIT_JS", "KATEX_JS", "KATEX_CSS"]
if len(parts) != len(names):
    sys.exit("usage: assemble.py OUT TEMPLATE " + " ".join(names))
text = open(template, encoding="utf-8").read()
for name, path in zip(names, parts):
    body = open(path, encoding="utf-8").read()
    if name == "KATEX_CSS":
        body = re.sub(r"@font-face\s*\{[^}]*\}", "", body)
    if "</script" in body.lower() and name.endswith("_JS"):
        body = re.sub(r"</(script)", r"<\\/\1", body, flags=re.I)
    marker = "/*@%s@*/" % name
    if marker not in text:
        sys.exit("%s: no %s marker" % (template, marker))
    text = text.replace(marker, body)
open(out, "w", encoding="utf-8").write(text)
