"""The official SageMath image's layout, built LOCALLY from the test image
(no registry): sagemath/sage's docker/Dockerfile makes an Ubuntu image with
SAGE_ROOT=/home/sage/sage, /usr/bin/sage a link to $SAGE_ROOT/sage, Sage's
Python a venv under $SAGE_ROOT/local/var/lib/sage/venv-python3.X, no
/usr/bin/python3, USER sage, and an entrypoint of its own. Here: Debian's
Sage of the test image, reached through such a venv (made with --copies, a
.pth naming Debian's dist-packages; tests/lib/sagelayout.py), Debian's sage
script moved aside and its Python scripts pointed at the venv, python3
removed from /usr/bin."""
import os
import shutil
import tempfile

from conftest import HERE, as_user, podman

TAG = "localhost/sagebox-sage:official-layout"
VENV = "/home/sage/sage/local/var/lib/sage/venv-python3.11"
PYTHON = VENV + "/bin/python3"
BASE_LABEL = "sagebox.test.base"

CONTAINERFILE = r"""FROM {base}
USER root
COPY sagelayout.py /tmp/sagelayout.py
RUN set -e; \
    mv /usr/bin/sage /usr/bin/sage-debian; \
    for s in env env-config config venv-config src-env-config version.sh gdb-commands ipython; do \
        if [ -e /usr/bin/sage-$s ]; then ln -s sage-$s /usr/bin/sage-debian-$s; fi; \
    done; \
    mkdir -p /home/sage/sage; \
    python3 /tmp/sagelayout.py /home/sage/sage /usr/bin/sage-debian; \
    test -x {python}; \
    ln -s /home/sage/sage/sage /usr/bin/sage; \
    ln -s /usr/bin/sage /usr/bin/sagemath; \
    for f in /usr/bin/sage-*; do \
        if [ -f "$f" ] && head -c 32 "$f" | grep -q '^#!/usr/bin/python3'; then \
            sed -i "1s|^#!/usr/bin/python3|#!{venv}/bin/python3|" "$f"; \
        fi; \
    done; \
    rm -f /usr/bin/python3 /tmp/sagelayout.py; \
    chown -R sage:sage /home/sage/sage
USER sage
ENV HOME=/home/sage SHELL=/bin/bash
WORKDIR /home/sage
# the official image's entrypoint is a script of its own; sagebox must not run it
ENTRYPOINT ["/bin/false"]
LABEL {label}="{base_id}"
"""


def _image_id(ref):
    r = podman("image", "inspect", "--format", "{{.Id}}", ref)
    return r.stdout.decode().strip() if r.returncode == 0 else None


def _label(ref):
    r = podman("image", "inspect", "--format", "{{index .Labels \"%s\"}}" % BASE_LABEL, ref)
    return r.stdout.decode().strip() if r.returncode == 0 else None


def ensure(base):
    """TAG, built from base unless it already is (labelled with base's ID)."""
    base_id = _image_id(base)
    assert base_id, f"no base image {base}"
    if _label(TAG) == base_id:
        return TAG
    ctx = tempfile.mkdtemp(prefix="sagebox-official-layout.")
    try:
        os.chmod(ctx, 0o755)
        shutil.copy(os.path.join(HERE, "..", "lib", "sagelayout.py"), ctx)
        with open(os.path.join(ctx, "Containerfile"), "w") as f:
            f.write(CONTAINERFILE.format(base=base, python=PYTHON, venv=VENV, label=BASE_LABEL, base_id=base_id))
        for n in os.listdir(ctx):
            os.chmod(os.path.join(ctx, n), 0o644)
        r = as_user(["podman", "--log-level=error", "build", "--pull=never", "--network=none", "-t", TAG,
                     "-f", os.path.join(ctx, "Containerfile"), ctx], timeout=900)
        assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    finally:
        shutil.rmtree(ctx, ignore_errors=True)
    return TAG
