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
