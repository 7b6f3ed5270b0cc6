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


def test_kill_then_restore(host):
    wscases.kill_then_restore(host)


def test_idle_expiry_saves(host):
    wscases.idle_expiry_saves(host)


def test_one_session_at_a_time(host):
    wscases.one_session_at_a_time(host)


def test_size_cap(host):
    wscases.size_cap(host)


def test_specials_not_kept(host):
    wscases.specials_not_kept(host)


def test_project_dir(host):
    wscases.project_dir(host)


def test_cli_export_import_rm(host):
    wscases.cli_export_import_rm(host)
