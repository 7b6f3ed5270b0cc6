"""Helpers for the sandbox break-out suite: every test runs code through the
real binary (`sagebox run --backend native`) and asserts from the outside
what the code inside could or could not do."""
import json
import os
import subprocess

import pytest

from hostproc import host_pids_with  # noqa: F401

BIN = os.environ.get("SAGEBOX_BIN", "/work/main/build/sagebox")
# SAGEBOX_TEST_VIA=session: every run is made in a fresh session (meson test
# sandbox-session; =workspace, sandbox-workspace: on a named workspace kept
# on disk); the few expectations that differ there (the workspace /work,
# the interpreter's pipes to its controller) ask this.
VIA_SESSION = os.environ.get("SAGEBOX_TEST_VIA") in ("session", "workspace")


class Run:
    def __init__(self, proc):
        self.proc = proc
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        """The last stdout line parsed as JSON (the probe's verdict)."""
        lines = [l for l in self.out.splitlines() if l.strip()]
        assert lines, f"no output; rc={self.rc} stderr={self.err!r}"
        return json.loads(lines[-1])

    def __repr__(self):
        return f"<rc={self.rc} out={self.out[-2000:]!r} err={self.err[-2000:]!r}>"


def run(code, lang="python", args=(), timeout=60, env=None, backend="native"):
    """Run code (on stdin) in a fresh sandbox; return a Run. With
    SAGEBOX_TEST_VIA=session, in a fresh session instead (tests/lib/sessionrun.py)."""
    if VIA_SESSION:
        import sessionrun
        rc, out, err = sessionrun.run(BIN, code, lang, args, max(timeout, 180), env, backend)
        return Run(subprocess.CompletedProcess([], rc, out, err))
    cmd = [BIN, "run", "--backend", backend, "--lang", lang, *args, "-"]
    e = dict(os.environ)
    if env:
        e.update(env)
    proc = subprocess.run(cmd, input=code, capture_output=True, text=True, timeout=timeout, env=e)
    return Run(proc)


def run_json(code, **kw):
    """Run with --json; return (result object, Run)."""
    kw.setdefault("args", ())
    kw["args"] = ("--json", *kw["args"])
    r = run(code, **kw)
    try:
        return json.loads(r.out), r
    except json.JSONDecodeError:
        pytest.fail(f"no JSON result: {r!r}")


@pytest.fixture(scope="session", autouse=True)
def binary_exists():
    if not os.access(BIN, os.X_OK):
        pytest.exit(f"sagebox binary not found at {BIN} (set SAGEBOX_BIN)", returncode=2)
    st = subprocess.run([BIN, "status", "--json"], capture_output=True, text=True, timeout=60)
    try:
        status = json.loads(st.stdout)
    except json.JSONDecodeError:
        status = {}
    native = status.get("backend", {})
    if native and native.get("available") is False:
        pytest.skip(f"native sandbox unavailable here: {native.get('error')}", allow_module_level=True)
