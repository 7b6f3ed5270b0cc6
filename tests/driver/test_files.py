"""files: workspace paths resolved beneath the workspace's fd, with openat2
and with the O_NOFOLLOW walk that replaces it where the kernel has none.
Every escape is refused: '..', absolute paths outside /work, symlinks out
(absolute or relative), a symlink swapped in while paths are opened, fifos."""
import os
import threading

import pytest

from driver import files
from driver.files import PathError


@pytest.fixture(params=["openat2", "walk"])
def ws(request, tmp_path):
    root = tmp_path / "work"
    root.mkdir()
    (tmp_path / "secret").write_text("host secret\n")
    w = files.Workspace(str(root))
    if request.param == "walk":
        w.beneath = False
    elif not w.beneath:
        pytest.skip("no openat2 here")
    yield w
    w.close()


def test_split():
    assert files.split("a/b.txt") == ["a", "b.txt"]
    assert files.split("/work/a//./b") == ["a", "b"]
    assert files.split("/work") == [] and files.split(".") == []
    for bad in ("../x", "a/../../x", "/work/../etc/passwd", "/etc/passwd", "/workx/a", "a\0b"):
        with pytest.raises(PathError):
            files.split(bad)
    # the real root of a host-backend workspace is accepted as well
    assert files.split("/tmp/ws/a", root="/tmp/ws") == ["a"]


def test_write_read_list(ws):
    shown, n = ws.write("sub/dir/f.txt", b"hello")
    assert shown == "/work/sub/dir/f.txt" and n == 5
    fd, st, parts = ws.open_read("/work/sub/dir/f.txt")
    assert os.pread(fd, 100, 0) == b"hello" and st.st_size == 5
    os.close(fd)
    ws.write("sub/dir/f.txt", b"!", append=True)
    fd, st, _ = ws.open_read("sub/dir/f.txt")
    assert os.read(fd, 100) == b"hello!"
    os.close(fd)
    p, entries, cut = ws.list("sub")
    assert p == "/work/sub" and not cut
    assert entries == [{"name": "dir", "type": "directory", "size": entries[0]["size"],
                        "mtime": entries[0]["mtime"]}]
    with pytest.raises(PathError, match="does not exist"):
        ws.open_read("nope")
    with pytest.raises(PathError, match="is a directory|not a regular file"):
        ws.open_read("sub")
    with pytest.raises(PathError, match="name a file"):
        ws.write("/work", b"x")


def test_symlinks_out_refused(ws, tmp_path):
    root = ws.root
    secret = str(tmp_path / "secret")
    os.symlink(secret, os.path.join(root, "abs"))
    os.symlink("../secret", os.path.join(root, "rel"))
    os.symlink(str(tmp_path), os.path.join(root, "dirout"))
    for p in ("abs", "rel", "dirout/secret"):
        with pytest.raises(PathError, match="outside the workspace|symbolic link"):
            ws.open_read(p)
        with pytest.raises(PathError, match="outside the workspace|symbolic link"):
            ws.write(p, b"overwritten")
    with pytest.raises(PathError):
        ws.list("dirout")
    assert open(secret).read() == "host secret\n"


def test_symlink_inside(ws):
    ws.write("real.txt", b"in")
    os.symlink("real.txt", os.path.join(ws.root, "link"))
    if ws.beneath:
        fd, _, _ = ws.open_read("link")
        assert os.read(fd, 10) == b"in"
        os.close(fd)
    else:
        with pytest.raises(PathError, match="symbolic link"):
            ws.open_read("link")
    # writing through a symlink is refused either way (O_NOFOLLOW)
    with pytest.raises(PathError):
        ws.write("link", b"x")


def test_fifo_refused_without_blocking(ws):
    os.mkfifo(os.path.join(ws.root, "fifo"))
    with pytest.raises(PathError, match="not a regular file"):
        ws.open_read("fifo")
    with pytest.raises(PathError, match="not a regular file"):
        ws.write("fifo", b"x")


def test_swapped_symlink_never_followed(ws, tmp_path):
    """A path flips between a file and a symlink out as fast as a thread
    can flip it while it is read: no read ever returns the outside file."""
    secret = str(tmp_path / "secret")
    target = os.path.join(ws.root, "flip")
    tmp_link = os.path.join(ws.root, ".flip-link")
    tmp_file = os.path.join(ws.root, ".flip-file")
    stop = threading.Event()

    def flipper():
        while not stop.is_set():
            try:
                os.symlink(secret, tmp_link)
                os.rename(tmp_link, target)
                with open(tmp_file, "w") as f:
                    f.write("inside\n")
                os.rename(tmp_file, target)
            except OSError:
                pass

    t = threading.Thread(target=flipper)
    t.start()
    seen = set()
    try:
        for _ in range(3000):
            try:
                fd, _, _ = ws.open_read("flip")
            except PathError as e:
                seen.add("refused")
                continue
            seen.add(os.read(fd, 100))
            os.close(fd)
    finally:
        stop.set()
        t.join()
    assert b"host secret\n" not in seen
    assert "refused" in seen


def test_list_caps(ws, monkeypatch):
    monkeypatch.setattr(files, "LIST_MAX", 5)
    for i in range(8):
        ws.write("f%d" % i, b"")
    _, entries, cut = ws.list(None)
    assert len(entries) == 5 and cut


def test_names_not_utf8_round_trip(ws):
    """a Name that is not UTF-8 is listed as channel.text shows it
    (each such byte as \\xNN), and that form names the file again for
    reading and writing."""
    from driver import channel
    os.mkdir(os.path.join(ws.root, "odd"))
    with open(os.path.join(ws.root.encode(), b"odd", b"\xff\xfe-latin1"), "wb") as f:
        f.write(b"latin\n")
    _, entries, _ = ws.list("odd")
    shown = channel.text(entries[0]["name"])
    assert shown == "\\xff\\xfe-latin1"
    fd, st, parts = ws.open_read("odd/" + shown)
    try:
        assert os.read(fd, 100) == b"latin\n"
    finally:
        os.close(fd)
    ws.write("/work/odd/" + shown, b"again\n")
    with open(os.path.join(ws.root.encode(), b"odd", b"\xff\xfe-latin1"), "rb") as f:
        assert f.read() == b"again\n"
    assert len(os.listdir(os.path.join(ws.root, "odd"))) == 1
    # escapes that spell UTF-8 are a name as written
    assert files.split("a\\x41") == ["a\\x41"]
