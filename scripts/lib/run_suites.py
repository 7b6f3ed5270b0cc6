#!/usr/bin/env python3
"""Run every test meson defines in the given builds, two at a time.

    run_suites.py LABEL=BUILDDIR[:nobuild] ...

A suite spends most of its time waiting (a sandbox's start, a container's,
a timeout it provokes): one at a time kept a 2-CPU machine a third busy and
took 77 minutes there. The tests of ALONE below run first, one at a time
and alone, as every test did before; then two lanes take the other tests
from one queue, longest first (the estimates below). The unit suite is one
job. SAGEBOX_TEST_LANES=1 runs everything one at a time.

What the tests depend on is built first; each test runs as
`meson test -C BUILDDIR --no-rebuild NAME` with a log of its own; a
finished test prints its result line (and the last TAIL lines of its output
when it did not pass: all of it is in its log), and at the end each build's results are joined into
BUILDDIR/meson-logs/testlog.json, the file scripts/lib/test_summary.py reads.
The ASan build's tests run with the sanitizer options that make a finding
fail its test."""
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import namedtuple

from test_summary import parse_builds

SANITIZER_ENV = {
    "asan": {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
             "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"},
}

# Seconds a test took in the release build on a 2-CPU machine;
# the ASan build's take about 1.4 times as long. Only the order uses them.
ESTIMATE = {
    "podman": 400, "fuzz": 340, "sessions": 330, "http": 190, "podman-network": 175,
    "doctest": 150, "warm": 140, "sandbox-fresh": 137, "sandbox-session": 121,
    "podman-official-layout": 120, "sandbox-network": 97, "mcp": 86, "sandbox": 78,
    "driver": 66, "network": 42, "service": 35, "packages": 33, "cli-fresh": 23,
    "scale": 65, "cli": 23, "lmstudio": 19, "viewer": 16, "unit": 15, "docs": 60, "history": 1, "pages": 1,
    "layers": 2,
}
SLOWER = {"asan": 1.4}
TAIL = 200  # lines of a failed test's output printed here
RESULT_LINE = re.compile(r"^\s*\d+/\d+ \S+ / \S+\s+\S+")


def lanes():
    v = os.environ.get("SAGEBOX_TEST_LANES")
    if v:
        if not v.isdigit() or int(v) < 1:
            sys.exit(f"run_suites: SAGEBOX_TEST_LANES={v!r}: give a whole number of 1 or more")
        return int(v)
    return max(1, min(2, os.cpu_count() or 1))


# One `meson test` run: its estimated seconds, the build's label and
# directory, a name, and the arguments that select its tests.
Job = namedtuple("Job", "estimate label builddir name args")


def jobs_of(label, builddir):
    """The Jobs of a build: one per test, the unit suite as one."""
    out = subprocess.run(["meson", "introspect", "--tests", builddir],
                         capture_output=True, text=True, check=True).stdout
    jobs, units = [], False
    for t in json.loads(out):
        if t["suite"][0].endswith(":unit") or t["suite"][0] == "unit":
            units = True
            continue
        name = t["name"]
        est = ESTIMATE.get(name, 30) * SLOWER.get(label, 1)
        jobs.append(Job(est, label, builddir, name, [name]))
    if units:
        jobs.append(Job(ESTIMATE["unit"] * SLOWER.get(label, 1), label, builddir, "unit", ["--suite", "unit"]))
    return jobs


# Tests that run alone, one at a time, before the others: the podman tests
# (they share the test user and a machine-wide lock; beside another suite
# under ASan one saw a finished sagebox's containers still listed 15 s
# later, not explained yet), the sandbox battery in its four settings
# (beside another suite its per-user resource test once found the hog had
# let go: it held a fixed 25 s then; now it holds until the test releases
# it, not yet tried beside others) and warm (beside others, its driver-code
# test once saw no process making the cache within 30 s; not reproduced
# under a loaded machine's load since).
ALONE = ("podman", "podman-network", "podman-official-layout", "sandbox", "sandbox-fresh",
         "sandbox-network", "sandbox-session", "warm")


def alone(job):
    return job.name in ALONE


class Queue:
    def __init__(self, jobs):
        self.pending = sorted(jobs, key=lambda j: -j.estimate)
        self.lock = threading.Lock()
        self.out = threading.Lock()

    def take(self):
        with self.lock:
            return self.pending.pop(0) if self.pending else None


def run_one(q, job):
    label, builddir, name, args = job.label, job.builddir, job.name, job.args
    logbase = "testlog-job-" + re.sub(r"[^A-Za-z0-9_-]", "_", name)
    env = dict(os.environ)
    env.update(SANITIZER_ENV.get(label, {}))
    t = time.monotonic()
    p = subprocess.run(["meson", "test", "-C", builddir, "--no-rebuild", "--print-errorlogs",
                        "--num-processes", "1", "--logbase", logbase, *args],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, text=True, errors="replace")
    took = time.monotonic() - t
    with q.out:
        lines = [l.strip() for l in p.stdout.splitlines() if RESULT_LINE.match(l)]
        if p.returncode == 0:
            for l in lines:
                print(f"[{label}] {l}")
        else:
            print(f"== [{label}] {name}: exit {p.returncode} after {took:.0f} s; meson said:")
            print(p.stdout.rstrip())
            for r in logged(builddir, logbase):
                if r.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
                    out = ((r.get("stdout") or "") + (r.get("stderr") or "")).splitlines()
                    print(f"== [{label}] {r['name']}: {r.get('result')}; the last {min(len(out), TAIL)} lines of its output:")
                    print("\n".join(out[-TAIL:]))
        print(f"[{label}] {name}: {took:.0f} s", flush=True)


def logged(builddir, logbase):
    """The results meson wrote to BUILDDIR/meson-logs/LOGBASE.json."""
    try:
        with open(os.path.join(builddir, "meson-logs", logbase + ".json")) as f:
            return [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError):
        return []


def lane(q):
    while True:
        job = q.take()
        if job is None:
            return
        try:
            run_one(q, job)
        except Exception as e:  # the summary counts its tests as not run
            with q.out:
                print(f"[{job.label}] {job.name}: could not run: {e}", flush=True)


def join_logs(builddir):
    logs = os.path.join(builddir, "meson-logs")
    with open(os.path.join(logs, "testlog.json"), "w") as out:
        for n in sorted(os.listdir(logs)):
            if n.startswith("testlog-job-") and n.endswith(".json"):
                with open(os.path.join(logs, n)) as f:
                    out.write(f.read())


def main(args):
    builds = []
    for label, builddir, nobuild in parse_builds(args):
        if nobuild:
            continue
        logs = os.path.join(builddir, "meson-logs")
        for n in os.listdir(logs) if os.path.isdir(logs) else []:
            if n.startswith("testlog"):  # never count a previous run's results
                os.unlink(os.path.join(logs, n))
        # what `meson test` would build first (the tests' own depends), once
        # here: two lanes must not run ninja in one build directory at once
        p = subprocess.run(["ninja", "-C", builddir, "meson-test-prereq"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            print(f"run_suites: building what the tests of {builddir} need failed:\n{p.stdout}", flush=True)
            continue
        builds.append((label, builddir))
    jobs = []
    for label, builddir in builds:
        try:
            jobs += jobs_of(label, builddir)
        except (OSError, subprocess.CalledProcessError, ValueError, LookupError) as e:
            print(f"run_suites: cannot list the tests of {builddir}: {e}", flush=True)
    n = lanes()
    first = [j for j in jobs if alone(j)]
    rest = [j for j in jobs if not alone(j)]
    print(f"== tests: {len(jobs)} jobs ({', '.join(l for l, _ in builds)}): {len(first)} alone, "
          f"then {len(rest)} {n} at a time", flush=True)
    t = time.monotonic()
    lane(Queue(first))
    q = Queue(rest)
    threads = [threading.Thread(target=lane, args=(q,)) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for _, builddir in builds:
        join_logs(builddir)
    print(f"== tests took {time.monotonic() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
