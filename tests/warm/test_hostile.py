"""The host does not trust the worker. A fake worker (the host backend with
--python pointing at a script) breaks the protocol in every way; each job
gets a clear result quickly, and the runner neither hangs nor crashes."""
import json
import os
import subprocess
import time

import pytest

from conftest import BIN, env_clean

PRELUDE = r'''#!/usr/bin/python3
import json, os, struct, sys, time
def send(h, payload=b""):
    body = json.dumps(h).encode() + ((b"\n" + payload) if payload else b"")
    os.write(1, struct.pack(">I", len(body)) + body)
def recv():
    def exact(n):
        b = b""
        while len(b) < n:
            c = os.read(0, n - len(b))
            if not c:
                sys.exit(0)
            b += c
        return b
    n = struct.unpack(">I", exact(4))[0]
    h, _, p = exact(n).partition(b"\n")
    return json.loads(h), p
'''

BEHAVIOURS = {
    "oversized": 'send({"type": "ready", "pid": 2})\nrecv()\nos.write(1, struct.pack(">I", 0x7fffffff) + b"x" * 100)\ntime.sleep(60)',
    "badjson": 'send({"type": "ready", "pid": 2})\nrecv()\nos.write(1, struct.pack(">I", 8) + b"not json")\ntime.sleep(60)',
    "wrongid": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "started", "id": h["id"] + 1})\ntime.sleep(60)',
    "badtypes": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "started", "id": h["id"]})\n'
                'send({"type": "done", "id": h["id"], "exit_code": "zero", "signal": 0, "timed_out": False, '
                '"cancelled": False, "flooded": False})\ntime.sleep(60)',
    "unknown": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "exec", "id": h["id"]})\ntime.sleep(60)',
    "exits": 'sys.stderr.write("fake worker: boom\\n")\nsys.exit(3)',
    "silent": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "started", "id": h["id"]})\ntime.sleep(60)',
    "flood": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "started", "id": h["id"]})\n'
             'while True:\n    send({"type": "out", "id": h["id"], "stream": "stdout"}, b"x" * 65536)',
    "dies": 'send({"type": "ready", "pid": 2})\nrecv()\nsys.exit(0)',
    "liar": 'send({"type": "ready", "pid": 2})\nh, _ = recv()\nsend({"type": "started", "id": h["id"]})\n'
            'send({"type": "out", "id": h["id"], "stream": "stdout"}, b"\\xff\\xfe bytes\\n")\n'
            'send({"type": "done", "id": h["id"], "exit_code": 0, "signal": 0, "timed_out": False, '
            '"cancelled": False, "flooded": False})\nrecv()',
}


def run_fake(tmp_path, behaviour, timeout_s=5):
    script = tmp_path / f"fake-{behaviour}"
    script.write_text(PRELUDE + BEHAVIOURS[behaviour] + "\n")
    script.chmod(0o755)
    t0 = time.time()
    p = subprocess.run([BIN, "run", "--json", "--backend", "host", "--isolation", "warm", "--python", str(script),
                        "--timeout", str(timeout_s), "--lang", "python", "-"], input="print(1)", capture_output=True,
                       text=True, timeout=120, env=env_clean())
    took = time.time() - t0
    return json.loads(p.stdout), p, took


@pytest.mark.parametrize("behaviour", ["oversized", "badjson", "wrongid", "badtypes", "unknown"])
def test_protocol_violation_is_a_clear_error(tmp_path, behaviour):
    res, p, took = run_fake(tmp_path, behaviour)
    assert res["ok"] is False and "protocol" in res["error"], res
    assert p.returncode == 125 and took < 10


def test_worker_that_cannot_start(tmp_path):
    res, p, took = run_fake(tmp_path, "exits")
    assert "exited while starting" in res["error"] and "fake worker: boom" in res["error"], res
    assert p.returncode == 125 and took < 10


def test_silent_worker_hits_the_host_deadline(tmp_path):
    res, p, took = run_fake(tmp_path, "silent", timeout_s=1)
    assert res["timed_out"] is True and p.returncode == 124, res
    assert took < 8


def test_flooding_worker_is_stopped(tmp_path):
    res, p, took = run_fake(tmp_path, "flood")
    assert res["output_limit_exceeded"] is True and res["truncated"]["stdout"] is True, res
    assert len(res["stdout"]) < 300 * 1024 and took < 10


def test_worker_dying_before_the_job_is_retried_then_reported(tmp_path):
    res, p, took = run_fake(tmp_path, "dies")
    assert res["ok"] is False and "warm workers kept failing" in res["error"], res
    assert took < 15


def test_invalid_utf8_from_worker_is_replaced(tmp_path):
    res, p, took = run_fake(tmp_path, "liar")
    assert res["ok"] is True and res["stdout"].endswith(" bytes\n") and "\ufffd" in res["stdout"], res
