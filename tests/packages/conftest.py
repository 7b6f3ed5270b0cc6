"""`sagebox packages`: a wheel from a simple index on loopback,
installed through sagebox's own proxy into a packages directory of the
test's own (XDG_DATA_HOME), then seen read-only by stateless runs."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from pyindex import serve

BIN = os.environ.get("SAGEBOX_BIN", os.path.join(os.path.dirname(__file__), "../../build/sagebox"))


@pytest.fixture(scope="session")
def index(tmp_path_factory):
    yield from serve(tmp_path_factory)


@pytest.fixture
def data_home():
    """XDG_DATA_HOME for one test, readable by the sandbox user (native as
    root drops to `nobody`, who reads the packages as "other"): not under
    pytest's tmp_path, which is mode 0700."""
    d = tempfile.mkdtemp(prefix="sagebox-packages-test.", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


class Box:
    def __init__(self, data_home):
        self.data_home = data_home
        self.dir = os.path.join(data_home, "sagebox", "site-packages")

    def __call__(self, *args, code=None, timeout=300):
        env = dict(os.environ)
        for k in ("SAGEBOX_BACKEND", "SAGEBOX_NETWORK", "SAGEBOX_ISOLATION"):
            env.pop(k, None)
        env["XDG_DATA_HOME"] = self.data_home
        return subprocess.run([BIN, *args], input=code, capture_output=True, text=True, env=env,
                              timeout=timeout)

    def run(self, code, *args):
        p = self("run", "--json", "--lang", "python", *args, "-", code=code)
        assert p.stdout.strip(), f"no JSON on stdout; stderr: {p.stderr}"
        return json.loads(p.stdout)

    def add(self, index, *names, network=None):
        return self("packages", "add", "--network", network or f"127.0.0.1:{index.port}",
                    "--index-url", index.url, *names)


@pytest.fixture
def box(data_home):
    return Box(data_home)
