"""janitor: the between-jobs reset must not crash on anything a job can
create, must remove all of it, must never follow a job's
symlink out of the sandbox's directories, and must notice a change to the
worker's own files even when no time changed (a write through a shared
mapping on tmpfs). Run on a private tmpfs directory standing in
for /tmp."""
import mmap
import os
import socket
import stat
import tempfile
import threading
import time

import pytest

from driver import confine, janitor
from driver.channel import Channel


@pytest.fixture
def box():
    """A tmpfs root (like the sandbox's /tmp) with a work dir and the
    worker's own files (HOME with caches), its baseline taken."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    root = tempfile.mkdtemp(prefix="sb-janitor-", dir=base)
    outside = tempfile.mkdtemp(prefix="sb-janitor-outside-")
    open(os.path.join(outside, "precious"), "w").write("keep me")
    work = os.path.join(root, "work")
    os.mkdir(work, 0o755)
    home = os.path.join(root, "home")
    os.makedirs(os.path.join(home, ".cache", "sage"))
    with open(os.path.join(home, ".cache", "sage", "cache.bin"), "wb") as f:
        f.write(os.urandom(8192))
    os.symlink("cache.bin", os.path.join(home, ".cache", "sage", "latest"))
    logs = []
    r = janitor.Reset(True, work, confine.libc(), logs.append, roots=(root,))
    r.take_baseline()
    r.logs = logs
    r.root, r.home, r.outside = root, home, outside
    yield r
    for d in (root, outside):
        janitor.Reset(False, d, None, logs.append).remove(d)
    assert not os.path.exists(root) and not os.path.exists(outside)


def listing(root):
    out = []
    for top, dirs, files in os.walk(root):
        out += [os.path.relpath(os.path.join(top, n), root) for n in dirs + files]
    return sorted(out)


BASELINE = ["home", "home/.cache", "home/.cache/sage", "home/.cache/sage/cache.bin",
            "home/.cache/sage/latest", "work"]


def deep_chain(top, depth, name="a"):
    """A chain of directories `depth` deep, made through fds (the path
    soon exceeds PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir(name, dir_fd=fd)
        nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    with open(os.open("bottom", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)


def nested_mode0(top):
    a = os.path.join(top, "a")
    os.makedirs(os.path.join(a, "b", "c"))
    open(os.path.join(a, "b", "c", "f"), "w").write("x")
    os.chmod(os.path.join(a, "b", "c"), 0)
    os.chmod(os.path.join(a, "b"), 0)
    os.chmod(a, 0)


def fifo_and_socket(top):
    os.mkfifo(os.path.join(top, "fifo"))
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(top, "sock"))
    s.close()


def symlink_loops(top):
    os.symlink("loop2", os.path.join(top, "loop1"))
    os.symlink("loop1", os.path.join(top, "loop2"))
    os.symlink(".", os.path.join(top, "self"))
    os.mkdir(os.path.join(top, "d"))
    os.symlink("..", os.path.join(top, "d", "up"))


def long_names(top):
    n = "n" * 255
    deep_chain(top, 24, name=n)  # 24 * 256 bytes: twice PATH_MAX
    open(os.path.join(top, "f" * 255), "w").write("x")


def many_files(top):
    d = os.path.join(top, "many")
    os.mkdir(d)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(20000):
        os.close(os.open("f%d" % i, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)


def odd_modes(top):
    d = os.path.join(top, "odd")
    os.mkdir(d)
    open(os.path.join(d, "f"), "w").write("x")
    os.chmod(os.path.join(d, "f"), 0)
    os.chmod(d, 0o1000)       # sticky, nothing else
    os.mkdir(os.path.join(top, "wo"), 0o200)   # write-only: cannot be listed
    os.mkdir(os.path.join(top, "xo"), 0o100)   # search-only


@pytest.mark.parametrize("make", [
    lambda t: deep_chain(t, 3000), nested_mode0, fifo_and_socket, symlink_loops, long_names, many_files, odd_modes,
], ids=["chain-3000", "nested-mode-0", "fifo-socket", "symlink-loops", "long-names", "20000-files", "odd-modes"])
@pytest.mark.parametrize("where", ["work", "root", "home-cache"])
def test_reset_removes_whatever_a_job_left(box, make, where):
    top = {"work": os.path.join(box.root, "work"), "root": box.root,
           "home-cache": os.path.join(box.home, ".cache")}[where]
    make(top)
    assert box.reset(None) is None, box.logs
    assert listing(box.root) == BASELINE and box.logs == []


def test_reset_never_follows_a_jobs_symlink_out(box):
    os.symlink(box.outside, os.path.join(box.root, "work", "out"))
    os.symlink(box.outside, os.path.join(box.root, "out"))
    # the work dir itself replaced by a symlink to somewhere else
    os.rename(os.path.join(box.root, "work"), os.path.join(box.root, "oldwork"))
    os.symlink(box.outside, os.path.join(box.root, "work"))
    assert box.reset(None) is None, box.logs
    assert listing(box.root) == BASELINE
    assert open(os.path.join(box.outside, "precious")).read() == "keep me"
    assert stat.S_ISDIR(os.lstat(os.path.join(box.root, "work")).st_mode)


def test_reset_restores_modes_of_the_workers_dirs(box):
    cache_dir = os.path.join(box.home, ".cache")
    mode = stat.S_IMODE(os.stat(cache_dir).st_mode)
    open(os.path.join(box.root, "work", "x"), "w").close()
    os.chmod(cache_dir, 0)
    os.chmod(os.path.join(box.root, "work"), 0o500)
    assert box.reset(None) is None, box.logs
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == mode
    assert os.access(os.path.join(cache_dir, "sage", "cache.bin"), os.R_OK)
    assert stat.S_IMODE(os.stat(os.path.join(box.root, "work")).st_mode) == 0o755
    assert listing(box.root) == BASELINE


def test_a_file_left_open_is_removed(box):
    f = open(os.path.join(box.root, "work", "held"), "w")
    try:
        f.write("x")
        assert box.reset(None) is None and listing(box.root) == BASELINE
    finally:
        f.close()


def cache(box):
    return os.path.join(box.home, ".cache", "sage", "cache.bin")


def test_an_ordinary_change_to_the_workers_files_is_noticed(box):
    with open(cache(box), "r+b") as f:
        f.write(b"changed")
    assert box.reset(None) == "the job changed files the worker keeps"
    assert any("cache.bin" in line for line in box.logs)


def test_a_change_through_a_shared_mapping_is_noticed(box):
    """on Tmpfs a MAP_SHARED write after the pages were
    read-faulted updates neither mtime nor ctime."""
    p = cache(box)
    before = os.stat(p)
    time.sleep(0.02)
    fd = os.open(p, os.O_RDWR)
    m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    first = m[0]                              # read-fault the page
    m[0] = (first + 1) % 256                  # then write through the mapping
    m.close()
    os.close(fd)
    after = os.stat(p)
    if "tmpfs" in open("/proc/self/mounts").read() and box.root.startswith("/dev/shm"):
        # what makes the attack work: the times did not move
        assert (after.st_mtime_ns, after.st_ctime_ns, after.st_size) == \
            (before.st_mtime_ns, before.st_ctime_ns, before.st_size)
    assert box.reset(None) == "the job changed files the worker keeps"


def test_files_past_what_the_janitor_keeps_are_compared_by_hash(box, monkeypatch):
    """The baseline keeps the files' bytes up to KEEP_BYTES_MAX in all;
    files past it are hashed. Both ways see a write that changes no time."""
    monkeypatch.setattr(janitor, "KEEP_BYTES_MAX", 0)
    box.take_baseline()
    kinds = {p: ident[-1][0] for p, ident in box.baseline.items() if len(ident) == 6 and ident[-1]}
    assert kinds == {cache(box): "hash"}, kinds
    assert box.reset(None) is None
    fd = os.open(cache(box), os.O_RDWR)
    m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[100] = (m[100] + 1) % 256
    m.close()
    os.close(fd)
    assert box.reset(None) == "the job changed files the worker keeps"


def test_kept_bytes_see_a_change_of_one_byte_anywhere(box):
    p = cache(box)
    assert box.baseline[p][-1][0] == "bytes" and len(box.baseline[p][-1][1]) == 8192
    for at in (0, 4095, 8191):
        box.take_baseline()                       # (the file as it is now)
        assert box.reset(None) is None, at
        fd = os.open(p, os.O_RDWR)
        m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        m[at] = (m[at] + 1) % 256
        m.close()
        os.close(fd)
        assert box.reset(None) == "the job changed files the worker keeps", at


def test_an_unchanged_worker_is_not_retired(box):
    open(cache(box), "rb").read()            # reading changes nothing
    assert box.reset(None) is None and box.reset(None) is None


def test_a_replaced_worker_dir_is_noticed(box):
    d = os.path.join(box.home, ".cache", "sage")
    os.rename(d, d + ".old")
    os.makedirs(d)
    assert box.reset(None) == "the job changed files the worker keeps"


def test_the_reset_has_a_time_budget(box, monkeypatch):
    many_files(os.path.join(box.root, "work"))
    monkeypatch.setattr(janitor, "RESET_BUDGET", 0.0)
    ch, fds = serve_in_thread(box)
    try:
        ch.send({"op": "reset", "job_work": None})
        assert ch.recv()[0] == {"problem": "resetting the files took too long"}
        assert any("took more than" in line for line in box.logs)
    finally:
        stop(ch, fds)


def serve_in_thread(box):
    req_r, req_w = os.pipe()
    ans_r, ans_w = os.pipe()
    t = threading.Thread(target=janitor.serve, args=(Channel(req_r, ans_w), box, box.logs.append))
    t.start()
    return Channel(ans_r, req_w), (req_r, req_w, ans_r, ans_w, t)


def stop(ch, fds):
    os.close(fds[1])
    fds[4].join(10)
    for fd in (fds[0], fds[2], fds[3]):
        os.close(fd)


def test_an_error_in_the_reset_is_logged_and_answered_not_fatal(box, monkeypatch):
    def broken(job_work):
        raise TypeError("".join(["what a job ", "made"]))   # (joined: not in the source line)
    monkeypatch.setattr(box, "reset", broken)
    ch, fds = serve_in_thread(box)
    try:
        ch.send({"op": "reset", "job_work": None})
        assert ch.recv()[0] == {"problem": "the reset failed (TypeError)"}
        logged = "\n".join(box.logs)
        assert "the reset failed (TypeError), at:" in logged and "in broken" in logged
        # not the message: it could name a job's file
        assert "what a job made" not in logged
        # and the janitor still answers
        ch.send({"op": "baseline"})
        assert ch.recv()[0] == {"problem": None}
    finally:
        stop(ch, fds)


def test_host_backend_removes_only_the_jobs_directory(tmp_path):
    job = tmp_path / "job-1"
    job.mkdir()
    nested_mode0(str(job))
    deep_chain(str(job), 200, name="c")
    (tmp_path / "other").write_text("not the job's")
    r = janitor.Reset(False, str(tmp_path), None, print)
    assert r.reset(str(job)) is None
    assert sorted(os.listdir(tmp_path)) == ["other"]
