"""wsync: a named workspace's files between a session and the host's store.
What travels (regular files with their holes, directories, the executable
bit), what does not and is said once (links, FIFOs, sockets, hard links'
other names, names that are not UTF-8), what a sync after a change sends,
and a restore written from the host's puts."""
import os
import stat

from driver import files, wsync


def collect(m, full=False, kept=True):
    frames = []
    m.sync(lambda h, p=b"": frames.append((h, p)), 7, full)
    assert frames[-1][0]["type"] == "reply" and frames[-1][0]["ok"]
    m.synced(7, kept)
    return [(h["op"], h.get("path"), h, p) for h, p in frames[:-1]]


def mirror(root):
    return wsync.Mirror(files.Workspace(str(root)), str(root), quiet_top=("project",))


def test_a_full_sync_sends_files_dirs_and_says_what_is_not_kept(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("hello")
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "run.sh", 0o4755)
    os.symlink("/etc/passwd", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    os.link(tmp_path / "d" / "a.txt", tmp_path / "z-hard")
    os.mkdir(os.fsencode(tmp_path) + b"/bad\xff")
    ops = collect(mirror(tmp_path))
    kinds = {(o, p) for o, p, _, _ in ops}
    assert ("dir", "d") in kinds and ("file", "d/a.txt") in kinds and ("file", "run.sh") in kinds
    skipped = {p: h["why"] for o, p, h, _ in ops if o == "skip"}
    assert "symbolic link" in skipped["link"] and "FIFO" in skipped["fifo"]
    assert "hard link" in skipped["z-hard"] and "d/a.txt" in skipped["z-hard"]
    assert any("UTF-8" in w for w in skipped.values())
    run = next(h for o, p, h, _ in ops if p == "run.sh")
    assert run["mode"] == 0o755  # executable kept, setuid not
    data = b"".join(pl for o, _, _, pl in ops if o == "data")
    assert b"hello" in data and b"#!/bin/sh" in data


def test_a_sync_sends_only_changes_and_skips_are_said_once(tmp_path):
    m = mirror(tmp_path)
    (tmp_path / "keep").write_text("same")
    (tmp_path / "edit").write_text("a")
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone" / "x").write_text("x")
    os.symlink("/etc", tmp_path / "link")
    collect(m)
    assert not m.dirty()
    (tmp_path / "edit").write_text("ab")
    (tmp_path / "gone" / "x").unlink()
    (tmp_path / "gone").rmdir()
    (tmp_path / "new").write_text("n")
    assert m.dirty()
    ops = collect(m)
    assert [(o, p) for o, p, _, _ in ops if o != "data"] == [("del", "gone"), ("file", "edit"), ("file", "new")]
    assert not m.dirty()


def test_a_sync_the_host_did_not_keep_is_sent_again(tmp_path):
    m = mirror(tmp_path)
    collect(m)
    (tmp_path / "a").write_text("1")
    assert [(o, p) for o, p, _, _ in collect(m, kept=False) if o != "data"] == [("file", "a")]
    (tmp_path / "b").write_text("2")
    assert [(o, p) for o, p, _, _ in collect(m) if o != "data"] == [("file", "a"), ("file", "b")]
    assert not m.dirty()


def test_two_syncs_asked_before_the_first_answer(tmp_path):
    m = mirror(tmp_path)
    collect(m)
    send = []
    (tmp_path / "a").write_text("1")
    m.sync(lambda h, p=b"": send.append(h), 1, False)
    (tmp_path / "b").write_text("2")
    m.sync(lambda h, p=b"": send.append(h), 2, False)  # against the old base: a again, and b
    assert [h.get("path") for h in send if h.get("op") == "file"] == ["a", "a", "b"]
    m.synced(1, True)
    m.synced(2, False)  # the second was not kept: b goes again, a does not
    assert [(o, p) for o, p, _, _ in collect(m) if o != "data"] == [("file", "b")]


def test_a_rewrite_that_restores_the_mtime_is_still_seen(tmp_path):
    m = mirror(tmp_path)
    f = tmp_path / "f"
    f.write_text("aaaa")
    collect(m)
    st = os.stat(f)
    f.write_text("bbbb")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert m.dirty()


def test_holes_stay_holes(tmp_path):
    m = mirror(tmp_path)
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(64 << 20)
        f.seek(32 << 20)
        f.write(b"x" * 4096)
    ops = collect(m)
    data = [(h["offset"], len(p)) for o, _, h, p in ops if o == "data"]
    assert sum(n for _, n in data) <= 64 * 1024
    assert all(off >= (32 << 20) - 65536 for off, _ in data)
    assert next(h for o, p, h, _ in ops if o == "file")["size"] == 64 << 20


def test_another_filesystem_is_not_walked(tmp_path, monkeypatch):
    for d in ("project", "other"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "secret").write_text("s")
    (tmp_path / "file").write_text("f")
    real = os.stat(tmp_path)

    class Elsewhere:
        st_dev = real.st_dev + 1
    # /work itself on "another device" than its directories: as a mount beneath it looks
    monkeypatch.setattr(wsync.os, "stat", lambda p, *a, **k: Elsewhere())
    now, skipped = wsync.scan(str(tmp_path), quiet_top=("project",))
    assert set(now) == {"file"}
    assert "project" not in skipped and "another filesystem" in skipped["other"]


def test_restore_writes_files_dirs_and_modes(tmp_path):
    m = mirror(tmp_path)
    assert m.put({"kind": "dir", "path": "d"}, b"") is None
    m.put({"kind": "file", "path": "d/a", "exec": False, "size": 5}, b"")
    m.put({"kind": "data", "offset": 0}, b"hello")
    m.put({"kind": "file", "path": "tool", "exec": True, "size": 1 << 20}, b"")
    m.put({"kind": "data", "offset": 4096}, b"x")
    m.put({"kind": "file", "path": "../escape", "size": 1}, b"")
    r = m.put({"kind": "end"}, b"")
    assert r["files"] == 2 and r["dirs"] == 1 and r["bytes"] == 6
    assert [e["path"] for e in r["errors"]] == ["../escape"]
    assert (tmp_path / "d" / "a").read_bytes() == b"hello"
    st = os.stat(tmp_path / "tool")
    assert st.st_size == 1 << 20 and st.st_blocks * 512 <= 64 * 1024 and stat.S_IMODE(st.st_mode) & 0o100
    assert not (tmp_path.parent / "escape").exists()
    assert not m.dirty()  # what was restored is what the host has


def test_restore_never_writes_through_a_symlink(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(str(outside), ws / "d")
    os.symlink(str(outside / "f"), ws / "f")
    m = mirror(ws)
    m.put({"kind": "file", "path": "d/x", "size": 1}, b"")
    m.put({"kind": "data", "offset": 0}, b"x")
    m.put({"kind": "file", "path": "f", "size": 1}, b"")
    m.put({"kind": "data", "offset": 0}, b"x")
    r = m.put({"kind": "end"}, b"")
    assert len(r["errors"]) == 2
    assert list(outside.iterdir()) == []
