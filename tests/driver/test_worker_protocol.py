"""The real warm worker (the bundle in worker mode), outside any sandbox
(own_pidns 0: the host backend's mode, where it only kills its own
descendants and removes each job's own directory), spoken to over its
stdin/stdout: the code follows the run frame as code_bytes raw bytes,
output frames are what the host expects, and a run frame that carries its
code inside (the retired protocol v1) is refused."""
import os
import subprocess
import sys

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def start(tmp_path):
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE}")
    p = subprocess.Popen([PY, "-I", "-c", open(BUNDLE).read(), "worker", "python", "/bin/sh", "0", "64"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    ch = channel.Channel(p.stdout.fileno(), p.stdin.fileno())
    hdr, _ = ch.recv()
    assert hdr["type"] == "ready" and hdr["kind"] == "python" and hdr["sandboxed"] is False, hdr
    return p, ch


@pytest.fixture
def worker(tmp_path):
    p, ch = start(tmp_path)
    yield ch
    p.stdin.close()
    assert p.wait(30) == 0, p.stderr.read()
    assert os.listdir(tmp_path) == [], "a job's directory was left"


def run(ch, jid, code, **extra):
    hdr = {"type": "run", "id": jid, "lang": "python", "timeout_ms": 10000, "max_output": 1 << 20,
           "limits": {}, "code_bytes": len(code), **extra}
    ch._write(channel.encode(hdr) + code)
    frames = []
    while True:
        h, payload = ch.recv()
        frames.append((h, payload))
        if h["type"] == "done":
            return frames


def outputs(frames, stream):
    return b"".join(p for h, p in frames if h["type"] == "out" and h["stream"] == stream)


def test_a_job_runs(worker):
    frames = run(worker, 1, b"import sys\nprint(sys.argv)\nprint('err', file=sys.stderr)\n6 * 7\n")
    assert frames[0][0] == {"type": "started", "id": 1}
    assert outputs(frames, "stdout") == b"['<cell>']\n42\n" and outputs(frames, "stderr") == b"err\n"
    done = frames[-1][0]
    assert (done["exit_code"], done["signal"], done["timed_out"], done["flooded"]) == (0, 0, False, False)


def test_jobs_one_after_another_on_one_worker(worker):
    for jid in (1, 2, 3):
        frames = run(worker, jid, b"print(%d)" % jid, exit_grace_ms=100)
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


@pytest.mark.parametrize("extra", [{}, {"code_bytes": -1}, {"code_bytes": True}], ids=["v1", "negative", "bool"])
def test_a_run_frame_without_a_valid_code_bytes_is_refused(tmp_path, extra):
    """The retired v1 frame (code inside the frame, no code_bytes) runs
    nothing: the worker names the bad frame and exits, and the host, which
    never sends one, would replace it."""
    p, ch = start(tmp_path)
    ch.send({"type": "run", "id": 1, "lang": "python", "timeout_ms": 10000, "max_output": 1 << 20,
             "limits": {}, **extra}, b"print('ran')")
    with pytest.raises(EOFError):
        ch.recv()
    assert p.wait(30) != 0
    assert b"bad run frame" in p.stderr.read()
