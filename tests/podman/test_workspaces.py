"""Named workspaces, saved state and the project folder on Podman, as the
test user (rootless; sagebox refuses a rootful engine): the cases of
tests/lib/wscases.py that tests/workspaces runs on the native backend."""
import json
import os

import pytest

import wscases
from conftest import IMAGE, SAGEBOX, podman
from wshost import Host


@pytest.fixture
def host():
    if os.geteuid() != 0 or not SAGEBOX:
        pytest.skip("needs root and the binary (it runs sagebox as the test user)")
    h = Host(SAGEBOX, as_user=True, backend="podman", image=IMAGE)
    yield h
    h.close()


globals().update(wscases.tests())


def _mapped_copies():
    """The image copies podman keeps for id mappings other than its own
    (one per mapping, each the image's size on disk): the layers of the
    test user's store that carry a uid map."""
    root = podman("info", "--format", "{{.Store.GraphRoot}}").stdout.decode().strip()
    with open(os.path.join(root, "overlay-layers", "layers.json")) as f:
        return {layer["id"] for layer in json.load(f) if layer.get("uidmap")}


def test_project_sessions_share_one_copy_of_the_image(host):
    """Every project-folder session maps the host user to the same
    container uid, so podman copies the image for that mapping once: three
    sessions leave at most one new copy, and the second and third none (a
    uid drawn per session made a new multi-GB copy each time, never freed,
    until the disk was full)."""
    proj = os.path.join(host.base, "project")
    os.mkdir(proj)
    os.chown(proj, host.uid, host.gid)
    before = _mapped_copies()
    uids = []
    for i in range(3):
        m = host.mcp("--project-dir", proj)
        sid, _ = wscases.open_ws(m, "copies%d" % i, lang="python")
        uids.append(wscases.out(m, sid, "import os\nprint(os.getuid())", "python").strip())
        wscases.ok(m, "session_close", {"session_id": sid})
        m.close()
        if i == 0:
            first = _mapped_copies()
    assert len(set(uids)) == 1, uids
    assert len(first - before) <= 1, first - before
    assert _mapped_copies() == first, _mapped_copies() - first
