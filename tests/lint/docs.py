#!/usr/bin/env python3
"""The pages of the repository hold together, each for one reader.

    docs.py SOURCE_ROOT

Checks every Markdown file `git ls-files` lists:
  - every relative link and image ([text](path), ![alt](path), with an
    optional #anchor) names a tracked file or directory inside the
    repository, and an anchor names a heading of that page (GitHub's
    slugs); no link leaves the repository (../ past its root);
  - each page of docs/ and CONTRIBUTING.md says who it is for: the first
    line after its title starts with "For ";
  - the sizes the pages are held to (README.md at most 250 lines and 15 KB,
    docs/WARM.md 30 KB, docs/ARCHITECTURE.md 40 KB);
  - every figure of the README's "Speed" table is on docs/BENCHMARKS.md,
    the page bench/run writes, so that the README cannot quote a figure
    the benchmark page no longer has.
Prints each problem as PATH:LINE: what, and exits 1 if there is one;
outside a git checkout it exits 77 (skipped).
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tracked import tracked  # noqa: E402

LIMITS = {"README.md": (250, 15 * 1024), "docs/WARM.md": (None, 30 * 1024),
          "docs/ARCHITECTURE.md": (None, 40 * 1024)}
FOR_WHOM = re.compile(r"^(docs/[^/]+\.md|CONTRIBUTING\.md)$")
# [text](target) or ![alt](target); target without spaces, optional "title"
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text):
    """(line number, line) of the lines outside fenced code blocks."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield n, line


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped,
    spaces to hyphens."""
    s = re.sub(r"`", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(text):
    seen, out = {}, set()
    for _, line in prose(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            k = seen.get(base, 0)
            out.add(base if k == 0 else f"{base}-{k}")
            seen[base] = k + 1
    return out


def directories(files):
    out = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            out.add(d)
            d = os.path.dirname(d)
    return out


def check_links(root, files, dirs, path, text, problems):
    for n, line in prose(text):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue   # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            if file_part:
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if resolved.startswith("..") or os.path.isabs(file_part):
                    problems.append(f"{path}:{n}: {target} leads outside the repository")
                    continue
                if resolved not in files and resolved not in dirs:
                    problems.append(f"{path}:{n}: {target}: no tracked file or directory {resolved}")
                    continue
            else:
                resolved = path
            if anchor and resolved.endswith(".md") and resolved in files:
                with open(os.path.join(root, resolved), encoding="utf-8") as f:
                    if anchor not in anchors(f.read()):
                        problems.append(f"{path}:{n}: {target}: {resolved} has no heading #{anchor}")


def check_for_whom(path, text, problems):
    lines = [l for l in text.splitlines()]
    i = 0
    while i < len(lines) and not lines[i].startswith("# "):
        i += 1
    rest = [l for l in lines[i + 1:] if l.strip()]
    if i == len(lines) or not rest or not rest[0].startswith("For "):
        problems.append(f"{path}:1: the page does not say who it is for: after its title, a line \"For ...\"")


def check_speed_rows(root, text, problems):
    """Each figure of the README's Speed table appears on docs/BENCHMARKS.md."""
    try:
        with open(os.path.join(root, "docs/BENCHMARKS.md"), encoding="utf-8") as f:
            page = f.read()
    except FileNotFoundError:
        problems.append("README.md: docs/BENCHMARKS.md is missing")
        return
    section = re.search(r"^## Speed\n(.*?)(?=^## )", text, re.S | re.M)
    if not section:
        problems.append("README.md: no \"## Speed\" section")
        return
    figures = [f for row in re.findall(r"^\|(.*)\|\s*$", section.group(1), re.M)
               for f in re.findall(r"\d+(?:\.\d+)?\s*(?:ms|x)\b", row)]
    if not figures:
        problems.append("README.md: the Speed section has no table of figures")
    for fig in figures:
        if fig not in page:
            problems.append(f"README.md: the Speed table's {fig!r} is not on docs/BENCHMARKS.md "
                            "(regenerated? quote its rows again)")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: docs.py SOURCE_ROOT")
    root = sys.argv[1]
    files = set(tracked(root, "docs.py"))
    dirs = directories(files)
    problems, pages = [], 0
    for path in sorted(f for f in files if f.endswith(".md")):
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        pages += 1
        check_links(root, files, dirs, path, text, problems)
        if FOR_WHOM.match(path):
            check_for_whom(path, text, problems)
        if path in LIMITS:
            max_lines, max_bytes = LIMITS[path]
            n_lines, n_bytes = text.count("\n"), len(text.encode())
            if max_lines and n_lines > max_lines:
                problems.append(f"{path}: {n_lines} lines, more than {max_lines}")
            if n_bytes > max_bytes:
                problems.append(f"{path}: {n_bytes} bytes, more than {max_bytes}")
        if path == "README.md":
            check_speed_rows(root, text, problems)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"docs.py: {pages} tracked Markdown pages: links resolve, each page says who it is for, "
          "sizes within bounds")


if __name__ == "__main__":
    main()
