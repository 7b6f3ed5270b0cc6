"""written: the files a session's call wrote, new or changed, found by
comparing snapshots of the workspace; symlinks not followed; a workspace
too large to walk is not compared; at most MAX_LINKS listed."""
import os

from driver import written


def test_new_and_changed_files_sorted(tmp_path):
    (tmp_path / "keep.txt").write_text("same")
    (tmp_path / "edit.txt").write_text("a")
    before = written.snapshot(str(tmp_path))
    (tmp_path / "edit.txt").write_text("ab")
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "new.csv").write_text("1")
    os.symlink("/etc/passwd", tmp_path / "link")
    assert written.changed(before, str(tmp_path)) == (["d/e/new.csv", "edit.txt"], 0)


def test_capped_and_counted(tmp_path):
    before = written.snapshot(str(tmp_path))
    for i in range(written.MAX_LINKS + 3):
        (tmp_path / ("f%02d" % i)).write_text("x")
    paths, more = written.changed(before, str(tmp_path))
    assert len(paths) == written.MAX_LINKS and paths[0] == "f00" and more == 3


def test_a_huge_workspace_is_not_compared(tmp_path, monkeypatch):
    monkeypatch.setattr(written, "MAX_SCAN", 5)
    for i in range(6):
        (tmp_path / str(i)).write_text("x")
    assert written.snapshot(str(tmp_path)) is None
    assert written.changed(None, str(tmp_path)) == ([], 0)
