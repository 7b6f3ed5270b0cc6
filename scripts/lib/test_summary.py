#!/usr/bin/env python3
"""The closing lines of scripts/test.

Counts every suite that meson defines (tests/meson.build defines all of them
on every machine), in every build, against what really happened: a suite
with no result (its build failed, meson stopped, it never ran) is failed,
never absent; a suite that skipped itself (exit 77) is listed with its
reason. Inside the suites it counts the tests each one reported (pytest's
summary line, node's TAP counts, the unit tests' "N passed, M failed") and
lists every skipped test with its reason.

    test_summary.py LABEL=BUILDDIR[:nobuild] ...

":nobuild" marks a build that failed to build, so that meson did not run its
tests (any testlog.json there is stale and ignored). Exit status 0 when no
expected suite failed or went missing.
"""
import itertools
import json
import re
import subprocess
import sys

PYTEST_COUNTS = re.compile(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+) in [\d.]+s")
PYTEST_SKIP = re.compile(r"^SKIPPED \[(\d+)\] (.*)$")
TAP_COUNT = re.compile(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$")
TAP_SKIP = re.compile(r"^\s*ok \d+ - (.*?) # SKIP ?(.*)$")
UNIT_COUNTS = re.compile(r"^(\d+) passed, (\d+) failed$")


def expected_tests(builddir):
    """Full names ("sagebox:unit / config") of the tests meson defines."""
    try:
        out = subprocess.run(["meson", "introspect", "--tests", builddir],
                             capture_output=True, text=True, check=True).stdout
        return [f"{t['suite'][0]} / {t['name']}" for t in json.loads(out)]
    except (OSError, subprocess.CalledProcessError, ValueError, LookupError):
        return None


def results(builddir):
    out = {}
    try:
        with open(f"{builddir}/meson-logs/testlog.json") as f:
            for line in f:
                r = json.loads(line)
                out[r["name"]] = r
    except (OSError, ValueError):
        pass
    return out


def test_counts(output):
    """(passed, failed, skipped, [skip reasons]) the suite's own output
    reports, or None when it reports no counts."""
    lines = output.splitlines()
    skips = []
    for line in lines:
        m = PYTEST_SKIP.match(line)
        if m:
            skips.append((int(m.group(1)), m.group(2)))
        m = TAP_SKIP.match(line)
        if m:
            skips.append((1, f"{m.group(1)}: {m.group(2) or 'skipped'}"))
    for line in reversed(lines):
        m = PYTEST_COUNTS.match(line.strip())
        if m:
            n = {w: int(c) for c, w in (p.split(" ") for p in m.group(1).split(", "))}
            failed = n.get("failed", 0) + n.get("error", 0) + n.get("errors", 0) + n.get("xpassed", 0)
            return n.get("passed", 0) + n.get("xfailed", 0), failed, n.get("skipped", 0), skips
    tap = {}
    for line in lines:
        m = TAP_COUNT.match(line.strip())
        if m:
            tap[m.group(1)] = int(m.group(2))
    if "pass" in tap:
        return (tap["pass"], tap.get("fail", 0) + tap.get("cancelled", 0),
                tap.get("skipped", 0) + tap.get("todo", 0), skips)
    for line in reversed(lines):
        m = UNIT_COUNTS.match(line.strip())
        if m:
            return int(m.group(1)), int(m.group(2)), 0, skips
    return None


TAP_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.*)$")
PYTEST_FAILED = re.compile(r"^(FAILED|ERROR) (\S+.*)$")


def tap_block(lines, i):
    """The YAML block under a TAP "not ok" line at i, as {key: text}:
    multi-line values ("error: |-") joined with " / "."""
    block, key, indent = {}, None, None
    for line in lines[i + 1:i + 200]:
        d = line.strip()
        if d == "---":
            continue
        if d == "...":
            break
        depth = len(line) - len(line.lstrip())
        m = re.match(r"^([A-Za-z_]+):\s?(.*)$", d)
        if m and (indent is None or depth <= indent):
            indent, key = depth, m.group(1)
            v = m.group(2)
            block[key] = "" if v in ("|-", "|", ">-") else v.strip("'")
        elif key and d:
            block[key] = (block[key] + " / " + d) if block[key] else d
    return block


def failures(output, limit=10):
    """The lines that name each failed test and why: node's "not ok" with
    the location, error and values of its TAP block, pytest's short
    summary. The suite's own log keeps only its last lines, often past the
    failure."""
    lines = output.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = TAP_NOT_OK.match(line)
        if m:
            b = tap_block(lines, i)
            if b.get("failureType") == "subtestsFailed":
                continue   # a suite failed by its failed test, named on its own
            out.append(f"not ok - {m.group(2)}")
            for k in ("location", "error", "expected", "actual"):
                if b.get(k):
                    out.append(f"    {k}: {b[k][:400]}")
            if b.get("stack"):
                out.append(f"    at {b['stack'].split(' / ')[0][:200]}")
            continue
        m = PYTEST_FAILED.match(line.strip())
        if m:
            out.append(line.strip()[:400])
    return out[:limit * 6]


def last_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def parse_builds(args):
    """[(label, builddir, nobuild)] of scripts/test's LABEL=BUILDDIR[:nobuild]."""
    builds = []
    for a in args:
        label, _, rest = a.partition("=")
        builddir, _, flag = rest.partition(":")
        builds.append((label, builddir, flag == "nobuild"))
    return builds


def main(args):
    builds = parse_builds(args)

    # Both builds define the same suites; one that could not even be
    # configured is held to the other's list.
    lists = {label: expected_tests(d) for label, d, _ in builds}
    common = next((l for l in lists.values() if l), None)

    total = dict(suites=0, s_passed=0, s_failed=0, s_skipped=0, passed=0, failed=0, skipped=0)
    # What went wrong is printed last, after what was skipped, and each
    # failed suite's first failed test once more at the very end: a reader
    # of the output's last lines (CI's record keeps only those) sees the
    # failure that came first, not the ones it caused (in CI: nine
    # failures, the first out of sight).
    notes, skipped, firsts = [], [], []
    for label, builddir, nobuild in builds:
        names = lists[label] or common
        if names is None:
            notes.append(f"{label}: no build directory could be configured: no suite ran")
            total["suites"] += 1
            total["s_failed"] += 1
            continue
        got = {} if nobuild else results(builddir)
        for name in names:
            total["suites"] += 1
            r = got.get(name)
            short = name.split(":", 1)[-1]
            if r is None:
                total["s_failed"] += 1
                why = "its build failed" if nobuild else "it did not run"
                notes.append(f"{label}: FAILED {short}: no result ({why})")
                continue
            stdout, stderr = r.get("stdout") or "", r.get("stderr") or ""
            out = stdout + "\n" + stderr
            counts = test_counts(out)
            if counts:
                p, f, s, skips = counts
                total["passed"] += p
                total["failed"] += f
                total["skipped"] += s
                for n, why in skips:
                    skipped.append(f"{label}: {short}: skipped {n} test{'s' if n > 1 else ''}: {why}")
            res = r.get("result")
            if res in ("OK", "EXPECTEDFAIL"):
                total["s_passed"] += 1
            elif res == "SKIP":
                total["s_skipped"] += 1
                skipped.append(f"{label}: SKIPPED {short}: {last_line(stderr or stdout)}")
            else:
                total["s_failed"] += 1
                notes.append(f"{label}: FAILED {short} ({res}): {last_line(stdout or stderr)}")
                failed = failures(out)
                notes.extend(f"{label}:   {l}" for l in failed)
                if failed:
                    # its name, then its own indented lines (location, error)
                    own = [failed[0], *itertools.takewhile(lambda l: l.startswith(" "), failed[1:3])]
                    first = " ".join(l.strip() for l in own)
                    firsts.append(f"{label}: {short}: the first failed test: {first[:600]}")

    for n in skipped + notes + firsts:
        print(n)
    t = total
    print(f"scripts/test: {t['suites']} suites expected ({', '.join(l for l, _, _ in builds)}): "
          f"{t['s_passed']} passed, {t['s_failed']} failed, {t['s_skipped']} skipped; "
          f"tests in them: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped")
    return 1 if t["s_failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
