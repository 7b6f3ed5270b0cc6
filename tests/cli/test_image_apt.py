"""`sagebox image build --apt PKG`: the extra Debian packages go
into mmdebstrap's --include of the image's build; anything but a Debian
package name is refused before anything runs. --dry-run only: a real build
takes ten minutes and a gigabyte."""
import re

from conftest import run


def include_of(p):
    m = re.search(r"--include=(\S+)", p.stderr)
    return m.group(1).split(",") if m else None


def test_apt_packages_in_the_include():
    p = run(["image", "build", "--dry-run", "--mirror", "http://deb.debian.org/debian",
             "--apt", "python3-networkx", "--apt=r-base-core"])
    assert p.returncode == 0, p.stderr
    assert include_of(p) == ["sagemath", "python3", "python3-pip", "singular-doc", "python3-networkx", "r-base-core"]


def test_without_apt_the_include_is_unchanged():
    p = run(["image", "build", "--dry-run", "--mirror", "http://deb.debian.org/debian"])
    assert p.returncode == 0, p.stderr
    assert include_of(p) == ["sagemath", "python3", "python3-pip", "singular-doc"]


def test_bad_apt_names_refused():
    for bad in ("Bad", "x,y", "--include=evil", "a b", "-x", "x;true", ""):
        p = run(["image", "build", "--dry-run", "--mirror", "http://deb.debian.org/debian", "--apt", bad])
        assert p.returncode == 2, (bad, p.stderr)
        assert "--apt takes a Debian package name" in p.stderr, (bad, p.stderr)
        assert "--include=sagemath" not in p.stderr  # no build command was printed or run


def test_the_root_is_built_in_var_tmp_unless_tmpdir_is_set():
    """mmdebstrap builds the ~3.5 GB root in $TMPDIR or /tmp, and Debian
    13's /tmp is a tmpfs of half the memory: without a TMPDIR of the
    user's (unset or empty), the build gets /var/tmp, on disk; the user's
    TMPDIR is kept."""
    p = run(["image", "build", "--dry-run", "--mirror", "http://deb.debian.org/debian"], env={"TMPDIR": ""})
    assert p.returncode == 0, p.stderr
    assert re.search(r"^  TMPDIR=/var/tmp +mmdebstrap ", p.stderr, re.M), p.stderr
    p = run(["image", "build", "--dry-run", "--mirror", "http://deb.debian.org/debian"],
            env={"TMPDIR": "/srv/scratch"})
    assert re.search(r"^  TMPDIR=/srv/scratch +mmdebstrap ", p.stderr, re.M), p.stderr
