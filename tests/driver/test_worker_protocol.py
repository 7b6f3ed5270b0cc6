"""The real warm worker (the bundle in worker mode), outside any sandbox
(own_pidns 0: the host backend's mode, where it only kills its own
descendants and removes each job's own directory), spoken to over its
stdin/stdout: protocol v2 (code after the frame, code_bytes) and v1 (code
inside the frame) both run, output frames are what the host expects."""
import os
import subprocess
import sys

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


@pytest.fixture
def worker(tmp_path):
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    p = subprocess.Popen([PY, "-I", "-c", open(BUNDLE).read(), "worker", "python", "/bin/sh", "0", "64"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    ch = channel.Channel(p.stdout.fileno(), p.stdin.fileno())
    hdr, _ = ch.recv()
    assert hdr["type"] == "ready" and hdr["kind"] == "python" and hdr["sandboxed"] is False, hdr
    yield ch
    p.stdin.close()
    assert p.wait(30) == 0, p.stderr.read()
    assert os.listdir(tmp_path) == [], "a job's directory was left"


def run(ch, jid, code, v2=True, **extra):
    hdr = {"type": "run", "id": jid, "lang": "python", "timeout_ms": 10000, "max_output": 1 << 20,
           "limits": {}, **extra}
    if v2:
        hdr["code_bytes"] = len(code)
        ch._write(channel.encode(hdr) + code)
    else:
        ch.send(hdr, code)
    frames = []
    while True:
        h, payload = ch.recv()
        frames.append((h, payload))
        if h["type"] == "done":
            return frames


def outputs(frames, stream):
    return b"".join(p for h, p in frames if h["type"] == "out" and h["stream"] == stream)


@pytest.mark.parametrize("v2", [True, False], ids=["v2", "v1"])
def test_a_job_runs(worker, v2):
    frames = run(worker, 1, b"import sys\nprint(sys.argv)\nprint('err', file=sys.stderr)\n6 * 7\n", v2=v2)
    assert frames[0][0] == {"type": "started", "id": 1}
    assert outputs(frames, "stdout") == b"['<cell>']\n42\n" and outputs(frames, "stderr") == b"err\n"
    done = frames[-1][0]
    assert (done["exit_code"], done["signal"], done["timed_out"], done["flooded"]) == (0, 0, False, False)


def test_v2_then_v1_then_v2_on_one_worker(worker):
    for jid, v2 in ((1, True), (2, False), (3, True)):
        frames = run(worker, jid, b"print(%d)" % jid, v2=v2, exit_grace_ms=100)
        assert outputs(frames, "stdout") == b"%d\n" % jid and frames[-1][0]["id"] == jid


def test_big_code_and_output_in_frames_of_at_most_64k(worker):
    code = b"s = '" + b"y" * 300000 + b"'\nimport sys\nsys.stdout.write(s * 2);\n"
    frames = run(worker, 1, code)
    assert outputs(frames, "stdout") == b"y" * 600000
    assert max(len(p) for h, p in frames if h["type"] == "out") <= 1 << 16


def test_exit_status_and_empty_code(worker):
    assert run(worker, 1, b"import sys; sys.exit(3)")[-1][0]["exit_code"] == 3
    frames = run(worker, 2, b"")
    assert frames[-1][0]["exit_code"] == 0 and outputs(frames, "stdout") == b""
