"""Figures from a job that writes its own records to its display pipe (the
fd the driver gave it; any code can find it): the host checks every record
and every PNG itself (runner/display_stream.c), keeps the good ones, names
what it refused, and stops a job that floods the pipe. The worker survives
and serves the next call (the `healthy` fixture)."""
import base64
import struct

from conftest import ok

# Where the job finds the pipe: the driver's items module holds the fd.
FD = "import sys, os, struct\n_fd = sys.modules['sagebox_driver.items']._out.fd\n"


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + b"\0\0\0\0"


def fake_png(w, h):
    """The shape of a PNG (the host does not decode pixels)."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"x" * 20) + chunk(b"IEND", b"")


def record(body):
    return struct.pack(">I", len(body)) + body


# A figure's record starts so: an item of kind png, not saved (N = 0).
FIG = b"Dp\0\0\0\0"


def test_bad_records_are_refused_and_good_ones_kept(healthy):
    good = fake_png(30, 20)
    writes = [record(FIG + b"not a png"), record(FIG + fake_png(5000, 10)), record(FIG + good),
              record(b"Q??"), struct.pack(">I", 1000) + FIG + b"short"]
    code = FD + "".join(f"os.write(_fd, {w!r})\n" for w in writes) + "os.close(_fd)\nprint('wrote')\n"
    r = healthy.call("run_python", {"code": code})
    res = r["structuredContent"]
    assert ok(res) and res["stdout"] == "wrote\n", res
    images = [base64.b64decode(c["data"]) for c in r["content"] if c["type"] == "image"]
    assert images == [good]
    assert res["figures"] == [{"figure": 3, "mime_type": "image/png", "width": 30, "height": 20,
                               "bytes": len(good)}]
    (bad,) = res["figures_not_shown"]
    assert (bad["reason"], bad["count"], bad["first"]) == ("invalid", 4, 1), bad
    text = r["content"][0]["text"]
    assert "[figure 3: 30×20 PNG]" in text
    assert "[4 figures not shown, the first is figure 1: not a PNG the host accepts (no PNG signature)]" in text


def test_a_flood_of_the_display_pipe_stops_the_job(healthy):
    code = FD + "os.set_blocking(_fd, True)\nblock = b'P' * (1 << 20)\nwhile True:\n    os.write(_fd, block)\n"
    r = healthy.run(code, timeout_s=60)
    assert r["output_limit_exceeded"] is True and r["ok"] is False, r
    assert r["duration_ms"] < 30000, r


def test_a_figure_from_an_exit_handler_still_arrives(healthy):
    # The child closes its display pipe before _exit (so the worker sees the
    # job's end at once), but only after the job's own exit handlers ran.
    code = ("import atexit\nimport matplotlib.pyplot as plt\n"
            "def last():\n    plt.plot([1, 2, 3])\n    plt.show()\n"
            "atexit.register(last)\nprint('registered')\n")
    r = healthy.call("run_python", {"code": code})
    res = r["structuredContent"]
    assert ok(res) and res["stdout"] == "registered\n", res
    assert [f["mime_type"] for f in res["figures"]] == ["image/png"], res
    assert [c["type"] for c in r["content"]].count("image") == 1
