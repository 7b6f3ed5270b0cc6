import json
import os
import subprocess

import pytest

BIN = os.environ.get("SAGEBOX_BIN", os.path.join(os.path.dirname(__file__), "../../build/sagebox"))
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))


def run(args, code=None, env=None, timeout=120):
    """Run the sagebox binary; returns CompletedProcess with text output."""
    e = dict(os.environ)
    e.pop("SAGEBOX_BACKEND", None)
    if env:
        e.update(env)
    return subprocess.run([BIN] + list(args), input=code, capture_output=True, text=True,
                          env=e, timeout=timeout)


def run_json(args, code, **kw):
    p = run(["run", "--json"] + list(args) + ["-"], code, **kw)
    assert p.stdout.strip(), f"no JSON on stdout; stderr: {p.stderr}"
    return p, json.loads(p.stdout)


@pytest.fixture
def sagebox():
    return run
