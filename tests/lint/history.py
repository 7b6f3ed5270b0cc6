#!/usr/bin/env python3
"""No development history in the tracked files.

A comment, a help text, a test or a page says why the code is as it is, on
its own: never in which numbered issue, milestone or "stop" it was written,
which finding of a review it answers, or who did it. A reader of the source
has no tracker to follow such a number, and `git log` already keeps the
when and the who. The changelogs (debian/changelog, CHANGELOG*) may name
versions and are not read.

    history.py SOURCE_ROOT

Reads every file `git ls-files` lists in SOURCE_ROOT (text files only),
prints each offending line as PATH:LINE: what it names, and exits 1 if
there is one. Outside a git checkout there is no list of tracked files: it
exits 77 (skipped) saying so. Before reading the tree it checks its own
patterns against samples that must and must not match, so a pattern that
stopped matching fails here instead of passing everything.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from tracked import tracked  # noqa: E402

# (what it names, pattern). The patterns are written so that this file does
# not match them itself (\s+ where the text would have a space).
PATTERNS = [
    ("a numbered issue or stop", re.compile(r"(?<![-\w])(?:[Ss]top|[Ii]ssue|ISSUE)s?\s+#?\d+")),
    ("a numbered finding of a review", re.compile(r"\bfindings?\s+#?\d+", re.I)),
    ("who did the work", re.compile(r"\bthe\s+lead\b(?!\s+(?:time|byte|character|to)\b)|\blead's\b", re.I)),
    ("who did the work", re.compile(r"\bhelpers?'s?(?![A-Za-z])", re.I)),
]

# Never read: the changelogs name versions and dates by design.
SKIP = re.compile(r"(^|/)(CHANGELOG[^/]*|debian/changelog)$", re.I)

# The patterns' own check: each sample of MUST is caught, none of MUST_NOT.
# Built from parts so that this file holds no offending text.
_sp = " "
MUST = [
    "the network proxy (issue" + _sp + "26)",
    "Issue" + _sp + "24: a file named",
    "measured at st" + "op" + _sp + "45",
    "Stop" + _sp + "42's forker",
    "the targets of issues" + _sp + "12, 26 and 30",
    "issue" + _sp + "#7",
    "(iss" + "ue" + _sp + "13, find" + "ing" + _sp + "2)",
    "the" + _sp + "le" + "ad's full bench/run",
    "run by the" + _sp + "lead on a quiet machine",
    "while two other help" + "ers' suites ran",
]
MUST_NOT = [
    "How to report an issue: write to the address below.",
    "Issues and pull requests are welcome.",
    "SIGSTOP stops a process; kill -STOP 1234 stops pid 1234.",
    "the proxy stops after 30 s of idle, and 2 stop words",
    "a helper function, a helper process, the helpers in tests/lib",
    "stop_timeout = 10 and issue_count 3",
    "the leading bytes; a lead time of 5 s; leads to 3 calls",
    "non-st" + "op" + _sp + "24/7 service",
]


def named(line):
    """(what, text) of the first pattern the line matches, or None."""
    for what, pat in PATTERNS:
        m = pat.search(line)
        if m:
            return what, m.group(0)
    return None


def self_check():
    bad = [f"not caught: {s!r}" for s in MUST if not named(s)]
    bad += [f"caught, but legitimate: {s!r} ({named(s)[1]!r})" for s in MUST_NOT if named(s)]
    if bad:
        sys.exit("history.py: its patterns are wrong:\n  " + "\n  ".join(bad))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: history.py SOURCE_ROOT")
    root = sys.argv[1]
    self_check()
    found, read = [], 0
    for path in tracked(root, "history.py"):
        if SKIP.search(path):
            continue
        full = os.path.join(root, path)
        try:
            with open(full, "rb") as f:
                data = f.read()
        except (FileNotFoundError, IsADirectoryError):
            continue   # deleted in the work tree, or a submodule
        if b"\0" in data:
            continue   # binary
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        read += 1
        for n, line in enumerate(text.splitlines(), 1):
            hit = named(line)
            if hit:
                found.append(f"{path}:{n}: names {hit[0]} ({hit[1]!r}): {line.strip()[:160]}")
    if found:
        print("\n".join(found))
        print(f"\nhistory.py: {len(found)} line(s) name development history. Say why the code is so "
              "on its own (e.g. \"the network proxy (issue N)\" -> \"the network proxy\"); "
              "when and who belong in git log.")
        sys.exit(1)
    print(f"history.py: {read} tracked text files, none names development history")


if __name__ == "__main__":
    main()
