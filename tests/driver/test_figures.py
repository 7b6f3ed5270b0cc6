"""figures and items: the records a job's figures become on the display
pipe (runner/display_stream.h reads them), the caps the driver applies
before the host does, scaling to the long-side cap, and the matplotlib
hooks. Sage's display backend needs Sage and runs in
tests/mcp/figures.test.js (through the real binary)."""
import fcntl
import io
import os
import struct
import subprocess
import sys

import pytest

from conftest import WORKER
from driver import figures, items

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
F_SETPIPE_SZ = 1031  # linux/fcntl.h (fcntl.F_SETPIPE_SZ from Python 3.10)
# As the host sends them in the run frame (core/display_caps.c,
# core/display_kinds.c), with small figure caps.
KINDS = {"text": ["t", "item"], "latex": ["l", "item"], "html": ["h", "item"], "png": ["p", "figure"],
         "svg": ["s", "item"], "threejs": ["j", "item"]}
MAX_COUNT, MAX_IMAGE, MAX_TOTAL = 3, 60000, 100000
CAPS = {"max_side": 1024, "classes": {"figure": [MAX_COUNT, MAX_IMAGE, MAX_TOTAL], "item": [32, 262144, 327680]},
        "kinds": KINDS}
FIGURE = b"Dp"  # an item of kind png: N (4 bytes) then the PNG
UNSAVED = struct.pack(">I", 0)

Image = pytest.importorskip("PIL.Image")
plt = pytest.importorskip("matplotlib.pyplot")


def records(data):
    out = []
    while data:
        n = struct.unpack(">I", data[:4])[0]
        out.append(data[4:4 + n])
        data = data[4 + n:]
    return out


@pytest.fixture
def sender():
    r, w = os.pipe2(os.O_CLOEXEC)
    # Room for every record a test writes: nothing reads while it writes.
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    os.set_blocking(r, False)
    items.begin(w, CAPS)
    chunks = []

    def read():
        while True:
            try:
                b = os.read(r, 1 << 20)
            except BlockingIOError:
                break
            chunks.append(b)
        return records(b"".join(chunks))
    yield read
    items.end()
    plt.close("all")
    os.close(r)
    os.close(w)


def png_bytes(w, h, noise=False):
    img = Image.effect_noise((w, h), 100).convert("RGB") if noise else Image.new("RGB", (w, h), (200, 30, 30))
    b = io.BytesIO()
    img.save(b, format="PNG")
    return b.getvalue()


def test_a_figure_that_fits_is_sent_as_is(sender):
    data = png_bytes(300, 200)
    figures.png(data)
    assert sender() == [FIGURE + UNSAVED + data]


def test_scaled_to_the_long_side_cap():
    out = figures.fit(png_bytes(3000, 1000), 1024, 1 << 20)
    assert figures.png_size(out) == (1024, 341)


def test_shrunk_to_the_byte_budget_or_none():
    noisy = png_bytes(1000, 1000, noise=True)
    assert len(noisy) > 60000
    out = figures.fit(noisy, 1024, 60000)
    assert out is not None and len(out) <= 60000 and max(figures.png_size(out)) < 1000
    assert figures.fit(noisy, 1024, 50) is None


def test_caps_count_total_and_size(sender):
    small = png_bytes(100, 100)
    big = png_bytes(800, 800, noise=True)  # over the per-image cap: shrunk
    figures.png(big)
    figures.png(small)
    figures.png(small)
    figures.png(small)  # the fourth: over the count
    recs = sender()
    assert [r[:2] for r in recs] == [FIGURE, FIGURE, FIGURE, b"Xp"] and recs[3] == b"Xpc"
    assert len(recs[0]) - 6 <= MAX_IMAGE
    assert sum(len(r) - 6 for r in recs[:3]) <= MAX_TOTAL


def test_over_the_total_says_so(sender):
    # Each figure is shrunk into what is left of the total, until too
    # little is left: then the driver says so (the count cap is out of the way).
    items.current().caps["figure"] = (100, MAX_IMAGE, MAX_TOTAL)
    noisy = png_bytes(700, 700, noise=True)
    for _ in range(12):
        figures.png(noisy)
    recs = sender()
    assert recs[0][:2] == FIGURE and recs[-1] == b"Xpt", [r[:3] for r in recs]
    shown = [r[6:] for r in recs if r[:2] == FIGURE]
    assert sum(map(len, shown)) <= MAX_TOTAL
    assert all(len(p) <= MAX_IMAGE for p in shown)
    assert MAX_TOTAL - sum(map(len, shown)) < figures.MIN_BUDGET


def test_a_huge_matplotlib_figure_is_drawn_small(sender):
    fig = plt.figure(figsize=(200, 100), dpi=300)
    fig.gca().plot([1, 2, 3])
    figures.mpl_figure(fig)
    (rec,) = sender()
    assert figures.png_size(rec[6:]) == (1024, 512)


def test_open_figures_are_flushed_in_order_and_closed(sender):
    a = plt.figure(figsize=(4, 2))
    plt.figure(figsize=(2, 4))
    plt.figure(a.number)  # the first made current again: order is by number
    figures.flush_open()
    recs = sender()
    assert [figures.png_size(r[6:]) for r in recs] == [(400, 200), (200, 400)]
    assert plt.get_fignums() == []


def test_display_takes_figures_only(sender):
    fig = plt.figure(figsize=(3, 3))
    assert figures.display(fig) is True
    assert figures.display([1, 2]) is False and figures.display("text") is False
    assert [figures.png_size(r[6:]) for r in sender()] == [(300, 300)]
    assert plt.get_fignums() == []


def test_items_under_their_class_caps(sender):
    out = items.current()
    assert out.item("latex", b"x^2") is True
    assert out.item("html", b"h" * 262145) is False         # over one item's cap
    assert out.item("svg", b"<svg/>") is True
    assert out.item("nonesuch", b"?") is False              # a kind the host did not name
    recs = sender()
    assert recs == [b"Dlx^2", b"Xhi", b"Ds<svg/>"]
    assert out.sent == {"figure": [0, 0], "item": [2, 9]}


def test_no_sender_no_figures():
    assert items.current() is None
    assert figures.display(plt.figure()) is False
    figures.flush_open()  # nothing to send to: nothing happens
    plt.close("all")


def test_a_broken_pipe_loses_figures_not_the_job():
    r, w = os.pipe()
    os.close(r)
    items.begin(w, CAPS)
    try:
        # The write meets EPIPE: no exception reaches the job's code, the
        # figure counts as sent, and the next one is tried the same way.
        figures.png(png_bytes(10, 10))
        figures.png(png_bytes(12, 12))
        assert items.current().sent["figure"][0] == 2
    finally:
        items.end()
        os.close(w)


def test_close_ends_the_display_pipe_for_the_reader():
    # A job's child closes it before _exit, so the worker sees the end of
    # the job without waiting for the child's memory to be torn down.
    r, w = os.pipe()
    items.begin(w, CAPS)
    try:
        items.close()
        assert items.current() is None
        assert os.read(r, 10) == b""  # EOF: no writer is left
        with pytest.raises(OSError):
            os.fstat(w)
    finally:
        items.end()
        os.close(r)


def test_close_leaves_alone_what_the_job_opened_under_the_pipes_number(tmp_path):
    r, w = os.pipe()
    items.begin(w, CAPS)
    os.close(w)  # the job closed the pipe ...
    fd = os.open(tmp_path / "mine", os.O_WRONLY | os.O_CREAT)  # ... and opened a file
    try:
        assert fd == w
        items.close()
        assert items.current() is None
        assert os.write(fd, b"still mine") == 10
    finally:
        items.end()
        os.close(fd)
        os.close(r)


HOOKED = r'''
import os, struct, sys
sys.path.insert(0, sys.argv[1])
from driver import hooks, items
hooks.install()
assert "matplotlib.pyplot" not in sys.modules
r, w = os.pipe()
items.begin(w, {"max_side": 1024, "classes": {"figure": [8, 1 << 20, 1 << 21]}, "kinds": {"png": ["p", "figure"]}})
import matplotlib.pyplot as plt    # hooked when imported
plt.plot([1, 2, 3])
plt.show()                         # sends it, closes it, and warns of nothing
fig, ax = plt.subplots()
fig.show()
os.close(w)
data = os.read(r, 1 << 22)
n = 0
while data:
    k = struct.unpack(">I", data[:4])[0]
    assert data[4:6] == b"Dp" and data[10:18] == b"\x89PNG\r\n\x1a\n"
    data = data[4 + k:]
    n += 1
print(n, plt.get_fignums())
'''


def test_pyplot_is_hooked_when_a_job_imports_it():
    p = subprocess.run([PY, "-I", "-W", "error", "-c", HOOKED, WORKER], capture_output=True, text=True, timeout=120,
                       env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    assert (p.returncode, p.stdout, p.stderr) == (0, "2 []\n", "")


def test_a_session_saves_figures_numbered_on_never_over_a_file(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "_saved", None)
    (tmp_path / "figure-2.png").write_bytes(b"theirs")
    (tmp_path / "figure-x.png").write_bytes(b"not a number")
    r, w = os.pipe2(os.O_CLOEXEC)
    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
    try:
        items.begin(w, CAPS, save_dir=str(tmp_path), keep_fd=True)
        data = png_bytes(20, 10)
        figures.png(data)
        # made after the driver looked: a symlink is neither followed nor replaced
        os.symlink("/nonexistent", tmp_path / "figure-4.png")
        figures.png(data)
        items.end()
        assert items.current() is None
        recs = records(os.read(r, 1 << 20))
    finally:
        os.close(r)
        os.close(w)
    # after the highest number there (2): 3, then 5
    assert [(rec[:2], struct.unpack(">I", rec[2:6])[0]) for rec in recs] == [(FIGURE, 3), (FIGURE, 5)]
    assert all(rec[6:] == data for rec in recs)
    assert (tmp_path / "figure-3.png").read_bytes() == data and (tmp_path / "figure-5.png").read_bytes() == data
    assert (tmp_path / "figure-2.png").read_bytes() == b"theirs" and os.readlink(tmp_path / "figure-4.png")
    assert not os.path.exists("/nonexistent")
