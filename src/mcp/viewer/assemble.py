#!/usr/bin/env python3
"""Make the viewer one self-contained HTML page (no network: the MCP Apps
extension's default CSP allows inline scripts and styles only):

    assemble.py OUT TEMPLATE VIEWER_CSS SHA256SUMS VIEWER_JS...

SHA256SUMS is vendor/'s list of the vendored files (KaTeX, three.js,
DOMPurify and their licences, made from the locked npm packages by
scripts/vendor-viewer): each file is read from beside it and refused unless
its SHA-256 is the one listed, so the page only ever inlines the pinned
releases. The viewer's own scripts are joined, in the order given, into
one strict-mode function. Each /*@NAME@*/ marker of the template is
replaced by its text, <!--@LICENSES@--> by the libraries' licences.

A 3D scene the viewer saves as HTML (export.js) is a page of its own with
two scripts, three.js (read from the viewer's <script id="three-js">) and
the scene page's script: limits.js, scene.js, scene_draw.js and
scene_page.js (given among VIEWER_JS, not part of the viewer) joined the
same way. Both are fixed texts, so their CSP hashes are computed here, as
the saved page's CSP names them, and the viewer gets the page's script and
both hashes as the constant EXPORT_SCRIPTS (the viewer's frame may be no
secure context, where the browser's crypto.subtle is absent).
KaTeX's @font-face rules are dropped: the default CSP has no font-src, so
the fonts could not load anyway, and a request for them would be one to
the network (formulas use the system's fonts and the MathML KaTeX writes
next to them)."""
import base64
import hashlib
import json
import os
import re
import sys

VENDORED = ["three.min.js", "katex.min.js", "katex.min.css", "purify.min.js", "VERSIONS",
            "LICENSE.katex", "LICENSE.three", "LICENSE.dompurify"]


def die(msg):
    sys.exit("assemble.py: " + msg)


def vendored(sums_path):
    """The vendored files' texts by name, each checked against SHA256SUMS."""
    listed = {}
    with open(sums_path, encoding="utf-8") as f:
        for line in f:
            digest, _, name = line.rstrip("\n").partition("  ")
            listed[name] = digest
    texts = {}
    for name in VENDORED:
        path = os.path.join(os.path.dirname(sums_path), name)
        if name not in listed:
            die("%s does not list %s: remake the vendored files with scripts/vendor-viewer" % (sums_path, name))
        try:
            data = open(path, "rb").read()
        except OSError as e:
            die("%s: %s" % (path, e.strerror))
        digest = hashlib.sha256(data).hexdigest()
        if digest != listed[name]:
            die("%s has SHA-256 %s, but %s lists %s: the vendored files are the locked npm packages as "
                "scripts/vendor-viewer makes them; remake them with it" % (path, digest, sums_path, listed[name]))
        texts[name] = data.decode("utf-8")
    return texts


def inline(body, tag):
    """Text safe inside <script> or <style>: no closing tag of its own."""
    return re.sub(r"</(%s)" % tag, r"<\\/\1", body, flags=re.I)


SCENE_PAGE = ["limits.js", "scene.js", "scene_draw.js", "scene_page.js"]


def strict(paths):
    """Scripts joined into one strict-mode function, safe inline."""
    own = "\n".join(open(p, encoding="utf-8").read() for p in paths)
    return inline("(function () {\n'use strict';\n" + own + "\n}());", "script")


def csp_hash(script):
    """A CSP source for an inline script of this exact text."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def main():
    if len(sys.argv) < 6:
        die("usage: assemble.py OUT TEMPLATE VIEWER_CSS SHA256SUMS VIEWER_JS...")
    out, template, css, sums, *scripts = sys.argv[1:]
    v = vendored(sums)
    by_name = {os.path.basename(p): p for p in scripts}
    missing = [n for n in SCENE_PAGE if n not in by_name]
    if missing:
        die("the scene page's scripts %s are not among the scripts given" % missing)
    three = inline(v["three.min.js"], "script")
    if "\r" in three or "\0" in three:
        die("three.min.js has a CR or NUL, which an HTML parser would change: its CSP hash would not match")
    page = strict(by_name[n] for n in SCENE_PAGE)
    export = json.dumps({"page": page, "pageHash": csp_hash(page), "threeHash": csp_hash(three)})
    viewer = [p for p in scripts if os.path.basename(p) != "scene_page.js"]
    parts = {
        "KATEX_CSS": inline(re.sub(r"@font-face\s*\{[^}]*\}", "", v["katex.min.css"]), "style"),
        "VIEWER_CSS": inline(open(css, encoding="utf-8").read(), "style"),
        "THREE_JS": three,
        "KATEX_JS": inline(v["katex.min.js"], "script"),
        "PURIFY_JS": inline(v["purify.min.js"], "script"),
        "VIEWER_JS": inline("(function () {\n'use strict';\nconst EXPORT_SCRIPTS = " + export + ";\n" +
                            "\n".join(open(p, encoding="utf-8").read() for p in viewer) + "\n}());", "script"),
    }
    licences = "The libraries inlined below (versions: %s)\n" % ", ".join(v["VERSIONS"].split("\n")).strip(", ")
    for name in ("katex", "three", "dompurify"):
        licences += "\n== %s\n%s" % (name, v["LICENSE." + name])
    if "--" in licences:
        die("a licence text has '--', which would end the HTML comment that carries it")
    parts["LICENSES"] = "<!--\n" + licences + "-->"
    text = open(template, encoding="utf-8").read()
    marker = re.compile(r"/\*@([A-Z_]+)@\*/|<!--@([A-Z_]+)@-->")
    found = [m.group(1) or m.group(2) for m in marker.finditer(text)]
    if sorted(found) != sorted(parts):
        die("%s: its markers are %s, not one each of %s" % (template, found, sorted(parts)))
    # One pass: a part's own text is never searched for markers.
    text = marker.sub(lambda m: parts[m.group(1) or m.group(2)], text)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


main()
