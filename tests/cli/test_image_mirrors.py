"""`sagebox image build`'s Debian mirrors when none is named: the sources
of this machine's apt for the image's release, and on another Debian
release (Debian 13 building the default bookworm image) the mirrors of its
own suites, each asked for the same suite of the image's release.
--dry-run only, on this machine's own /etc/os-release and apt sources."""
import re

import pytest

from conftest import run


def own_release():
    try:
        kv = dict(l.split("=", 1) for l in open("/etc/os-release").read().splitlines() if "=" in l)
    except OSError:
        return None
    kv = {k: v.strip("\"'") for k, v in kv.items()}
    return kv.get("VERSION_CODENAME") if kv.get("ID") == "debian" else None


def sources_of(p):
    return re.findall(r"'deb (\S+) (\S+) main'", p.stderr)


@pytest.fixture
def release():
    own = own_release()
    if not own:
        pytest.skip("not a Debian machine with VERSION_CODENAME in /etc/os-release")
    p = run(["image", "build", "--dry-run", "--suite", own])
    if p.returncode != 0:
        pytest.skip(f"this machine's apt names no mirror for {own} main: {p.stderr[-200:]}")
    return own, sources_of(p)


def test_own_release_from_its_sources(release):
    own, srcs = release
    assert srcs and all(re.fullmatch(rf"{own}(-updates|-security)?", s) for _, s in srcs), srcs


def test_another_release_from_the_same_mirrors(release):
    own, srcs = release
    other = "bookworm" if own != "bookworm" else "trixie"
    p = run(["image", "build", "--dry-run", "--suite", other])
    assert p.returncode == 0, p.stderr
    assert sources_of(p) == [(uri, other + s[len(own):]) for uri, s in srcs], p.stderr


def test_a_named_mirror_wins():
    p = run(["image", "build", "--dry-run", "--suite", "bookworm", "--mirror", "http://mirror.example/debian"])
    assert p.returncode == 0, p.stderr
    assert sources_of(p) == [("http://mirror.example/debian", "bookworm")], p.stderr
