"""Named workspaces, saved state and the project folder on Podman, as the
test user (rootless; sagebox refuses a rootful engine): the cases of
tests/lib/wscases.py that tests/workspaces runs on the native backend."""
import os

import pytest

import wscases
from conftest import IMAGE, SAGEBOX
from wshost import Host


@pytest.fixture
def host():
    if os.geteuid() != 0 or not SAGEBOX:
        pytest.skip("needs root and the binary (it runs sagebox as the test user)")
    h = Host(SAGEBOX, as_user=True, backend="podman", image=IMAGE)
    yield h
    h.close()


globals().update(wscases.tests())
