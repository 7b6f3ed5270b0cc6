"""A copy of a binary that another user can run: a test that runs sagebox
as an unprivileged user cannot reach a build directory in a mode-700 home
(a checkout under /root), so it runs a copy in a folder of its own, which
goes when the test process exits."""
import atexit
import os
import shutil
import tempfile


def shared_copy(path, prefix="sagebox-bin."):
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    os.chmod(d, 0o755)
    dst = os.path.join(d, os.path.basename(path))
    shutil.copy(path, dst)
    os.chmod(dst, 0o755)
    return dst
