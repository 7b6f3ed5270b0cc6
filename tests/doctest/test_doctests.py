"""Sage's own doctests inside the sandbox: `sage -t` on a slice of
Debian's Sage sources, run on the host and inside each backend (native and
Podman; a stateless shell job and a shell session), example by example. An
example that passes on the host and fails (or does not run) in a sandbox
fails the suite, unless REFUSED names it with the security reason for
refusing what it needs.

The modules each stress the sandbox differently (MODULES says how); ~580
examples, ~15-25 s a run. The Podman cases run as the Podman suite's test user
(as root only, like that suite) against its image, whose Sage is Debian's:
the same sources at the same paths as the host's."""
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from mcpclient import MCP

SAGE_SRC = "/usr/lib/python3/dist-packages/sage"
# module (under SAGE_SRC): what it stresses
MODULES = {
    "interfaces/gp.py": "a pexpect interface (PARI's gp on a pty)",
    "interfaces/jmoldata.py": "Java (Jmol): the JDK's /etc configuration",
    "parallel/decorate.py": "@parallel and @fork: forked workers",
    "parallel/use_fork.py": "forked workers with timeouts and their temporary files",
    "misc/temporary_file.py": "temporary files and atomic writes in TMPDIR",
    "misc/persist.pyx": "save/load: pickles in files, DOT_SAGE",
    "plot/circle.py": "plotting: matplotlib saving PNGs",
    "lfunctions/sympow.py": "sympow and its data cache (SYMPOW_PKGCACHEDIR)",
}
# (module, doctest name) -> why the sandbox refuses what the example needs.
# Empty: every example that passes on the host passes in each sandbox.
REFUSED = {}
SEED = "0"
LIMITS = ("--memory", "2g", "--pids", "256", "--output-limit-kib", "2048")
TIMEOUT = 600
BIN = os.environ.get("SAGEBOX_BIN", "/work/main/build/sagebox")
HERE = os.path.dirname(os.path.abspath(__file__))


def files():
    return [os.path.join(SAGE_SRC, m) for m in MODULES]


def command():
    # --nthreads 1: one file at a time; java: Jmol's examples marked
    # "optional - java" run too (those also marked internet do not)
    return ["sage", "-t", "--nthreads", "1", "--optional=sage,pip,java", "--random-seed=" + SEED, *files()]


HEADER = re.compile(r"^sage -t (?:--\S+ )*(\S+)$")
TALLY = re.compile(r"^    \[(\d+) tests?(?:, (\d+) failures?)?, [\d.]+ s\]$")
FAILED = re.compile(r'^File "([^"]+)", line (\d+), in (\S+)$')


def parse(out):
    """{file: examples run, or the line saying why none were}, and the set
    of failed examples as (file, line, doctest name)."""
    tallies, failed, current = {}, set(), None
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if m and m.group(1).startswith(SAGE_SRC):
            current = m.group(1)
            continue
        m = TALLY.match(line)
        if m and current:
            tallies[current] = int(m.group(1))
            current = None
            continue
        if current and line.startswith("    ") and line.strip() and not line.startswith("    ["):
            tallies.setdefault(current, line.strip())  # "Timed out", "Bad exit: 1", "Killed ..."
        m = FAILED.match(line)
        if m and i + 1 < len(lines) and lines[i + 1] in ("Failed example:", "Exception raised:"):
            failed.add((m.group(1), int(m.group(2)), m.group(3)))
    return tallies, failed


def short(path):
    return os.path.relpath(path, SAGE_SRC)


@pytest.fixture(scope="module")
def host():
    if not shutil.which("sage") or not all(os.path.exists(f) for f in files()):
        pytest.skip("no Debian Sage with its sources at " + SAGE_SRC)
    home = tempfile.mkdtemp(prefix="sagebox-doctest-host.")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "DOT_SAGE": home + "/dot-sage",
           "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "MPLBACKEND": "Agg",
           "SAGE_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    try:
        p = subprocess.run(command(), capture_output=True, text=True, env=env, cwd=home, timeout=TIMEOUT)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    tallies, failed = parse(p.stdout)
    assert sorted(tallies) == sorted(files()), p.stdout[-3000:] + p.stderr[-2000:]
    assert all(isinstance(n, int) and n > 0 for n in tallies.values()), tallies
    return tallies, failed


def script():
    return " ".join(command()) + "\n"


@functools.lru_cache(maxsize=None)
def podman_helpers():
    """tests/podman/conftest.py's helpers (the test user, its image), or a
    reason to skip."""
    if os.geteuid() != 0:
        return None, "Podman runs as the Podman suite's test user: run as root (meson test's doctest suite does)"
    spec = importlib.util.spec_from_file_location("podman_helpers", os.path.join(HERE, "..", "podman", "conftest.py"))
    pm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pm)
    try:
        import pwd
        pwd.getpwnam(pm.USER)
    except KeyError:
        return None, f"no user {pm.USER}: run scripts/podman-test-setup"
    if pm.podman("image", "exists", pm.IMAGE).returncode != 0:
        return None, f"image {pm.IMAGE} missing: run scripts/podman-test-setup"
    return pm, None


def run_job(backend):
    """`sage -t` as a stateless shell job: (stdout, what to show)."""
    if backend == "native":
        argv, prefix, binary = ["--backend", "native"], [], BIN
    else:
        pm, why = podman_helpers()
        if pm is None:
            pytest.skip(why)
        argv, prefix, binary = ["--backend", "podman", "--image", pm.IMAGE], pm.as_user_argv([]), pm.SAGEBOX
    p = subprocess.run([*prefix, binary, "run", "--json", "--lang", "shell", "--timeout", str(TIMEOUT), *LIMITS,
                        *argv, "-"], input=script(), capture_output=True, text=True, timeout=TIMEOUT + 60)
    res = json.loads(p.stdout)
    return res["stdout"], res


def run_session(backend):
    """`sage -t` in a shell session (its interpreter, its workspace)."""
    if backend == "native":
        flags, prefix, binary = ["--backend", "native"], (), BIN
    else:
        pm, why = podman_helpers()
        if pm is None:
            pytest.skip(why)
        flags, prefix, binary = ["--backend", "podman", "--image", pm.IMAGE], pm.as_user_argv([]), pm.SAGEBOX
    with MCP(binary, (*flags, *LIMITS), prefix=prefix) as m:
        opened = m.call("session_open", {"lang": "shell"}, TIMEOUT)
        assert not opened.get("isError"), opened
        sid = opened["structuredContent"]["session_id"]
        try:
            r = m.call("run_shell", {"code": script(), "session_id": sid, "timeout_seconds": TIMEOUT}, TIMEOUT + 60)
        finally:
            m.call("session_close", {"session_id": sid}, 60)
    res = r.get("structuredContent") or {}
    return res.get("stdout", ""), res


@pytest.mark.parametrize("backend", ["native", "podman"])
@pytest.mark.parametrize("via", ["job", "session"])
def test_doctests_pass_in_the_sandbox_where_they_pass_on_the_host(host, backend, via):
    host_tallies, host_failed = host
    out, res = (run_job if via == "job" else run_session)(backend)
    tallies, failed = parse(out)
    what = json.dumps({k: v for k, v in res.items() if k != "stdout"})[-3000:] + "\n" + out[-6000:]
    # every module ran every example it runs on the host
    ran = {short(f): tallies.get(f, "no result") for f in files()}
    assert ran == {short(f): n for f, n in host_tallies.items()}, what
    new = sorted((short(f), line, name) for f, line, name in failed - host_failed
                 if (short(f), name) not in REFUSED)
    assert not new, "examples that pass on the host fail here: %s\n%s" % (new, what)
