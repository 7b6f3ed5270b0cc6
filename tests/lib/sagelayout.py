"""Sage installed where users have it, laid out from Debian's Sage:
a venv made with --copies whose interpreter imports Debian's Sage through a
path configuration (.pth), at Sage's own place for it
(SAGE_ROOT/local/var/lib/sage/venv-python3.X), and a `sage` script in
SAGE_ROOT that runs that venv's Python for `sage --python` and Debian's sage
for the rest. Used by tests/sandbox (a Sage outside /usr, native) and
tests/podman (the official image's layout, built from the test image)."""
import os
import stat
import subprocess
import sys

PYVER = "python%d.%d" % sys.version_info[:2]
VENV_REL = "local/var/lib/sage/venv-" + PYVER

SAGE_SCRIPT = """#!/bin/sh
# A Sage-like installation (sagebox tests): SAGE_ROOT={root}, its Python a venv.
export PATH="{venv}/bin:$PATH"
if [ "$1" = --python ] || [ "$1" = -python ]; then
    shift
    exec "{venv}/bin/python3" "$@"
fi
exec {debian_sage} "$@"
"""


def lay_out(sage_root, python="/usr/bin/python3", debian_sage="/usr/bin/sage",
            dist_packages="/usr/lib/python3/dist-packages"):
    """Make sage_root/sage and sage_root/VENV_REL; returns the venv's python3."""
    venv = os.path.join(sage_root, VENV_REL)
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    subprocess.run([python, "-m", "venv", "--copies", "--without-pip", venv], check=True)
    site = os.path.join(venv, "lib", PYVER, "site-packages")
    with open(os.path.join(site, "debian-sage.pth"), "w") as f:
        f.write(dist_packages + "\n")
    script = os.path.join(sage_root, "sage")
    with open(script, "w") as f:
        f.write(SAGE_SCRIPT.format(root=sage_root, venv=venv, debian_sage=debian_sage))
    os.chmod(script, 0o755)
    for d, dirs, files in os.walk(sage_root):
        for n in dirs + files:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | stat.S_IRGRP | stat.S_IROTH |
                         (stat.S_IXGRP | stat.S_IXOTH if os.path.isdir(p) or os.access(p, os.X_OK) else 0))
    return os.path.join(venv, "bin", "python3")


if __name__ == "__main__":
    # python3 sagelayout.py SAGE_ROOT [DEBIAN_SAGE]: used inside an image build
    print(lay_out(sys.argv[1], debian_sage=sys.argv[2] if len(sys.argv) > 2 else "/usr/bin/sage"))
