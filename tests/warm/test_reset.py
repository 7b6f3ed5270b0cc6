"""The between-jobs reset against what a hostile job can leave :
none of it may crash the worker (the next call would pay a cold
worker) and all of it must be gone for the next job. And a change to a file
the worker keeps, made through a shared mapping that updates no time,
must retire the worker."""
import time

import pytest

from conftest import ok

LISTING = r"""
import os
found = []
for root in ("/tmp", "/dev/shm"):
    for top, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(top, n)
            if not p.startswith("/tmp/home"):
                found.append(p)
print(sorted(found))
"""

HOSTILE = {
    "chain-3000": r"""
import os
fd = os.open("/tmp", os.O_RDONLY)
for i in range(3000):
    os.mkdir("a", dir_fd=fd)
    nfd = os.open("a", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
print("made")
""",
    "nested-mode-0": r"""
import os
os.makedirs("/tmp/a/b/c")
os.makedirs("/tmp/work/x/y")
for d in ("/tmp/a/b/c", "/tmp/a/b", "/tmp/a", "/tmp/work/x/y", "/tmp/work/x"):
    os.chmod(d, 0)
os.chmod("/tmp/work", 0)
print("made")
""",
    "fifo-socket-loops": r"""
import os, socket
for d in ("/tmp", "/tmp/work", "/dev/shm", "/tmp/home"):
    os.mkfifo(d + "/fifo")
    s = socket.socket(socket.AF_UNIX); s.bind(d + "/sock"); s.close()
    os.symlink("loop2", d + "/loop1"); os.symlink("loop1", d + "/loop2")
    os.symlink("/", d + "/root"); os.symlink(".", d + "/self")
print("made")
""",
    "long-names": r"""
import os
fd = os.open("/tmp", os.O_RDONLY)
for i in range(40):
    os.mkdir("n" * 255, dir_fd=fd)
    nfd = os.open("n" * 255, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
open("/tmp/" + "f" * 255, "w").write("x")
print("made")
""",
    "many-files": r"""
import os
os.mkdir("/tmp/many")
fd = os.open("/tmp/many", os.O_RDONLY)
for i in range(30000):
    os.close(os.open(str(i), os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
print("made")
""",
    "held-open-by-a-leftover": r"""
import os, subprocess
open("/tmp/held", "w").write("x")
subprocess.Popen(["/bin/sh", "-c", "exec 3</tmp/held; cd /tmp; sleep 1000"], start_new_session=True)
print("made")
""",
    "tmp-full": r"""
import os
n = 0
try:
    while True:
        fd = os.open("/tmp/fill%d" % n, os.O_WRONLY | os.O_CREAT, 0o600)
        n += 1
        os.posix_fallocate(fd, 0, 16 << 20)
        os.close(fd)
except OSError as e:
    print("made" if e.errno == 28 else e)
""",
}


@pytest.mark.parametrize("what", list(HOSTILE))
def test_reset_survives_what_a_job_leaves(healthy, what):
    before = healthy.run(LISTING)
    assert ok(before), before
    r = healthy.run(HOSTILE[what], timeout_s=60)
    assert r["stdout"].strip().endswith("made"), r
    after = healthy.run(LISTING)
    assert ok(after) and after["stdout"] == before["stdout"], after
    # the same worker: the reset did not crash it, nothing was left to retire it for
    w0, w2 = before["sandbox"]["warm"], after["sandbox"]["warm"]
    assert w2["worker_jobs"] == w0["worker_jobs"] + 2, (w0, w2)


MMAP_ATTACK = r"""
import mmap, os
# A file the worker itself keeps (anything outside the work dir that
# exists at the start of a job is the worker's: the reset removes the rest).
target = None
for top, dirs, files in os.walk("/tmp/home"):
    for n in sorted(files):
        p = os.path.join(top, n)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 0:
            target = p
            break
    if target:
        break
st = os.stat(target)
fd = os.open(target, os.O_RDWR)
m = mmap.mmap(fd, 1, mmap.MAP_SHARED)
orig = m[0]
m[0] = orig ^ 0xff
m.close()
os.close(fd)
st2 = os.stat(target)
print(target, orig, (st.st_mtime_ns, st.st_ctime_ns) == (st2.st_mtime_ns, st2.st_ctime_ns))
"""


WORKER_FILES = r"""
import os
print(sum(len(f) for _, _, f in os.walk("/tmp/home")))
"""


def test_a_workers_file_changed_through_mmap_retires_it(healthy):
    # the worker's caches appear with its warm-ups (plot: matplotlib)
    deadline = time.time() + 60
    while healthy.run(WORKER_FILES, "sage")["stdout"].strip() == "0" and time.time() < deadline:
        time.sleep(1)
    r = healthy.run(f"exec({MMAP_ATTACK!r})", "sage")   # plain Python: no preparse of ^
    assert ok(r), r
    target, orig, times_unchanged = r["stdout"].split()
    jobs = r["sandbox"]["warm"]["worker_jobs"]
    r = healthy.run(f"import os\nprint(open({target!r}, 'rb').read(1)[0] if os.path.exists({target!r}) else 'gone')",
                    "sage")
    assert ok(r), r
    # a new worker (a fresh sandbox), where the file is as it was or not there at all
    assert r["sandbox"]["warm"]["worker_jobs"] == 1, (jobs, r["sandbox"]["warm"])
    assert r["stdout"].strip() in (orig, "gone"), r
