"""Named workspaces, saved state and the project folder on the native
backend, as root and as the unprivileged test user: the cases are
tests/lib/wscases.py's (tests/podman/test_workspaces.py runs them on
Podman)."""
import os

import pytest

import wscases
from wshost import Host

BIN = os.environ.get("SAGEBOX_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "sagebox"))


@pytest.fixture(params=["root", "user"])
def host(request):
    if os.geteuid() != 0:
        pytest.skip("needs root (it also runs sagebox as the test user)")
    h = Host(os.path.abspath(BIN), as_user=request.param == "user")
    yield h
    h.close()


globals().update(wscases.tests())
