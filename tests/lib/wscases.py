"""The named-workspace cases, for any Host (tests/lib/wshost.py): the native
backend as root and as the test user (tests/workspaces), Podman as the test
user (tests/podman/test_workspaces.py). Each is a function of a Host."""
import json
import os
import pickle
import pwd
import stat
import time

import pytest
from wshost import disk_bytes, ok, out, run, text

SAGE_STATE = """
R.<x> = QQ[]
p = x^3 - 2*x + 1
M = matrix(QQ, [[1, 2], [3, 4]])
d = {'primes': [2, 3, 5], 'name': 'thesis'}
f = open('/work/log.txt', 'w')
g = lambda y: y + 1
os.makedirs('/work/chapter1', exist_ok=True)
open('/work/chapter1/results.txt', 'w').write(str(p.factor()))
print('ok')
"""


def open_ws(m, name="thesis", lang="sage", restore=False, **extra):
    args = {"lang": lang, "workspace": name, **extra}
    if restore:
        args["restore"] = True
    r = ok(m, "session_open", args)
    return r["structuredContent"]["session_id"], r


def kill_then_restore(h):
    """Files and variables come back after a SIGKILL of sagebox; what could
    not be saved is named."""
    m = h.mcp()
    sid, r = open_ws(m)
    assert "new workspace thesis" in text(r), text(r)
    assert out(m, sid, SAGE_STATE).strip() == "ok"
    r = ok(m, "session_save", {"session_id": sid})
    st = r["structuredContent"]["state"]
    assert {"R", "p", "M", "d", "x"} <= set(st["saved"]), st
    assert {n["name"] for n in st["not_saved"]} >= {"f", "g"}, st
    # a change after the save and a call: its files are kept, its variables not
    assert out(m, sid, "q = 7\nopen('/work/after.txt', 'w').write('after the save')\nprint(1)").strip() == "1"
    # a call's changes are committed by the time the next call ends (what a
    # SIGKILL may lose is the running call's and the last call's writes)
    assert out(m, sid, "print(2)").strip() == "2"
    h.kill(m)
    # the store on disk, seen from outside: the files and the saved state
    assert open(os.path.join(h.store, "thesis", "files", "chapter1", "results.txt")).read() == "(x - 1) * (x^2 + x - 1)"
    assert os.path.exists(os.path.join(h.store, "thesis", "files", "after.txt"))
    # the last call's own sync may be staged when the SIGKILL comes: the
    # next open settles it (committed or dropped), so no stage outlives it
    m = h.mcp()
    sid, r = open_ws(m, restore=True)
    assert not os.path.exists(os.path.join(h.store, "thesis", "stage"))
    t = text(r)
    assert "Restored" in t and "f (" in t and "g (" in t, t
    got = out(m, sid, "print(p.parent() is R, p.factor(), M.det(), d['primes'], "
                      "open('chapter1/results.txt').read(), open('after.txt').read(), 'q' in globals())")
    assert got.strip() == "True (x - 1) * (x^2 + x - 1) -2 [2, 3, 5] (x - 1) * (x^2 + x - 1) after the save False", got
    assert "workspace thesis" in text(run(m, sid, "1"))
    ok(m, "session_close", {"session_id": sid})
    m.close()


def idle_expiry_saves(h):
    """An idle workspace session expires; its variables were saved then
    (no session_save), and come back with its files."""
    m = h.mcp("--session-idle-minutes", "1")
    sid, _ = open_ws(m, "idle")
    assert out(m, sid, SAGE_STATE).strip() == "ok"
    # no call for the idle minute (a call would keep it in use), then the
    # reaper (every second) and the save at the close
    time.sleep(75)
    r = run(m, sid, "1")
    assert r.get("isError") and "expired" in text(r), text(r)
    m.close()
    m = h.mcp()
    sid, r = open_ws(m, "idle", restore=True)
    t = text(r)
    assert "Restored" in t and "f (" in t and "g (" in t, t
    got = out(m, sid, "print(p.parent() is R, p.factor(), M.det(), d['name'], open('chapter1/results.txt').read())")
    assert got.strip() == "True (x - 1) * (x^2 + x - 1) -2 thesis (x - 1) * (x^2 + x - 1)", got
    m.close()


def term_all_saves(h):
    """A reboot or logout stops sagebox and its sandboxes together (SIGTERM
    to every process of the unit): the variables set since the last save
    are saved before the sandboxes go, as at a clean stop of sagebox alone."""
    if h.backend != "native":
        pytest.skip("on Podman the container's processes are conmon's, not below the server: "
                    "a SIGTERM to the server's processes would not reach them as a unit's stop does")
    for client_first in (False, True):
        name = "stopped-%d" % client_first
        m = h.mcp()
        sid, _ = open_ws(m, name, lang="python")
        assert out(m, sid, "n = 1\nprint(n)", "python").strip() == "1"
        ok(m, "session_save", {"session_id": sid})
        assert out(m, sid, "late = 2\nopen('/work/late.txt', 'w').write('2')\nprint(late)", "python").strip() == "2"
        assert h.term_all(m, client_first) >= 3  # the server, a sandbox, its interpreter at least
        m = h.mcp()
        sid, r = open_ws(m, name, lang="python", restore=True)
        assert "Restored" in text(r), text(r)
        got = out(m, sid, "print(n, globals().get('late'), open('late.txt').read())", "python")
        assert got.strip() == "1 2 2", (client_first, got)
        ok(m, "session_close", {"session_id": sid})
        m.close()


def one_session_at_a_time(h):
    """A second open of an open workspace is refused, naming the session;
    from another sagebox process too."""
    m = h.mcp()
    sid, _ = open_ws(m, "busy", lang="python")
    r = m.call("session_open", {"lang": "python", "workspace": "busy"})
    assert r.get("isError") and sid in text(r), text(r)
    other = h.mcp()
    r = other.call("session_open", {"lang": "python", "workspace": "busy"})
    assert r.get("isError") and "another sagebox process" in text(r), text(r)
    ok(m, "session_close", {"session_id": sid})
    sid2, _ = open_ws(other, "busy", lang="python")  # free again
    ok(other, "session_close", {"session_id": sid2})
    # two opens at the same moment, from two processes: exactly one
    import threading
    got = {}

    def open_from(name, server):
        got[name] = server.call("session_open", {"lang": "python", "workspace": "race"})
    ts = [threading.Thread(target=open_from, args=(n, srv)) for n, srv in (("a", m), ("b", other))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    opened = [n for n, r in got.items() if not r.get("isError")]
    assert len(opened) == 1, {n: text(r) for n, r in got.items()}
    refused = got["b" if opened == ["a"] else "a"]
    assert "in use" in text(refused), text(refused)
    other.close()
    m.close()


CAP_CODE = r"""
import errno, os
def fill(path, n):
    try:
        with open(path, 'wb') as f:
            f.write(b'x' * n)
        return 'wrote'
    except OSError as e:
        return errno.errorcode[e.errno]
print(fill('/work/big', 3 << 20))
os.remove('/work/big')
n = 0
try:
    os.makedirs('/work/many', exist_ok=True)
    while True:
        with open('/work/many/%d' % n, 'w') as f:
            f.write('y')
        n += 1
except OSError as e:
    print('small', errno.errorcode[e.errno], n > 100)
"""

SPARSE_CODE = r"""
import os, shutil
shutil.rmtree('/work/many')
with open('/work/sparse', 'wb') as f:
    f.truncate(64 << 20)
    f.seek(32 << 20)
    f.write(b'z' * 4096)
print('sparse', os.stat('/work/sparse').st_size)
"""


def size_cap(h):
    """The cap holds while the code writes (ENOSPC), with many small files
    and a sparse file, and nothing past it lands on disk."""
    cap = 2 << 20
    m = h.mcp("--workspace-size", "2m")
    sid, r = open_ws(m, "capped", lang="python")
    assert r["structuredContent"]["named_workspace"]["cap_bytes"] == cap
    o = out(m, sid, CAP_CODE, "python")
    assert o.splitlines() == ["ENOSPC", "small ENOSPC True"], o
    files = os.path.join(h.store, "capped", "files")
    assert out(m, sid, "print(1)", "python").strip() == "1"  # (the last call's sync committed)
    assert 100 < len(os.listdir(os.path.join(files, "many"))), "the small files were not kept"
    assert disk_bytes(files) <= cap, disk_bytes(files)
    # a sparse file of 64 MiB with 4 KiB of data: its data counts, its holes stay holes
    o = out(m, sid, SPARSE_CODE, "python")
    assert o.strip() == "sparse 67108864", o
    assert out(m, sid, "print(1)", "python").strip() == "1"
    assert not os.path.exists(os.path.join(files, "many"))
    assert os.stat(os.path.join(files, "sparse")).st_size == 64 << 20
    assert disk_bytes(files) <= cap, disk_bytes(files)
    # 1.5 MiB kept: of a total of 3 MiB, the next workspace gets what is left
    assert out(m, sid, "open('/work/fill', 'wb').write(b'x' * (1536 << 10))\nprint(1)", "python").strip() == "1"
    ok(m, "session_close", {"session_id": sid})
    assert (1536 << 10) <= disk_bytes(files) <= cap, disk_bytes(files)
    # all of a client's workspaces together: workspaces_total
    m.close()
    m = h.mcp("--workspace-size", "2m", "--workspaces-total", "3m")
    sid, r = open_ws(m, "second", lang="python")
    left = r["structuredContent"]["named_workspace"]["cap_bytes"]
    assert left <= (3 << 20) - disk_bytes(files) + 4096 and left < cap, left
    o = out(m, sid, "import errno\ntry:\n    open('/work/f','wb').write(b'x' * (2 << 20))\n    print('wrote')\n"
                    "except OSError as e:\n    print(errno.errorcode[e.errno])", "python")
    assert o.strip() == "ENOSPC", o
    m.close()


SPECIALS = r"""
import os
os.symlink('/etc/passwd', '/work/link')
os.link('/work/real.txt', '/work/hard.txt')
os.mkfifo('/work/fifo')
try:
    os.chmod('/work/real.txt', 0o4755)
    print('setuid made')
except PermissionError:
    print('setuid refused')
try:
    os.mknod('/work/dev', 0o20666, os.makedev(1, 3))
    print('device made')
except PermissionError:
    print('device refused')
"""


def specials_not_kept(h):
    """Links, FIFOs, devices and setuid bits are neither followed nor
    recreated: those the code makes, and those put into the store by hand."""
    m = h.mcp()
    sid, _ = open_ws(m, "special", lang="python")
    ok(m, "file_write", {"session_id": sid, "path": "real.txt", "content": "real"})
    r = run(m, sid, SPECIALS, "python")
    o = r["structuredContent"]["stdout"]
    assert o.splitlines() == ["setuid refused", "device refused"], o
    # what this call's own sync did not keep is said with the next call's
    # result, never with this one's as "the last call's" (its sync may end
    # before this result is made)
    assert "link (a symbolic link" not in text(r), text(r)
    r = run(m, sid, "print(1)", "python")
    t = text(r)
    assert "not kept" in t and "link (a symbolic link" in t and "fifo (a FIFO" in t, t
    ok(m, "session_close", {"session_id": sid})
    files = os.path.join(h.store, "special", "files")
    names = sorted(n for n in os.listdir(files) if n != ".sagebox")  # (.sagebox: the variables saved at the close)
    # real.txt and hard.txt are one file: kept once, under the name the walk met first
    assert len(names) == 1 and names[0] in ("real.txt", "hard.txt"), names
    kept = names[0]
    assert open(os.path.join(files, kept)).read() == "real" and os.stat(os.path.join(files, kept)).st_nlink == 1
    # by hand, as the host user: a symlink to a host file, a FIFO, a hard
    # link to a file outside, a setuid file; as root also a device node
    secret = os.path.join(h.base, "secret")
    with open(secret, "w") as f:
        f.write("host secret")
    os.symlink(secret, os.path.join(files, "evil-link"))
    os.mkfifo(os.path.join(files, "evil-fifo"))
    os.link(secret, os.path.join(files, "evil-hard"))
    suid = os.path.join(files, "suid.sh")
    with open(suid, "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(suid, 0o4755)
    os.mknod(os.path.join(files, "evil-dev"), 0o20666, os.makedev(1, 3))
    if h.as_user:
        for n in os.listdir(files):
            os.lchown(os.path.join(files, n), h.uid, h.gid)
    m.close()
    m = h.mcp()
    sid, r = open_ws(m, "special", lang="python")
    t = text(r)
    for n in ("evil-link", "evil-fifo", "evil-hard", "evil-dev"):
        assert n in t, (n, t)
    o = out(m, sid, "import os\nprint(sorted(n for n in os.listdir('/work') if n != '.sagebox'), "
                    "oct(os.stat('/work/suid.sh').st_mode & 0o7777))", "python")
    assert o.strip() == "[%r, 'suid.sh'] 0o755" % kept, o
    m.close()


PROJECT_CODE = r"""
import errno, os
def tryit(f):
    try:
        f()
        return 'done'
    except OSError as e:
        return errno.errorcode[e.errno]
P = '/work/project'
print(tryit(lambda: open(P + '/new.txt', 'w').write('from the sandbox')))
print(tryit(lambda: os.symlink('/etc/passwd', P + '/link')))
print(tryit(lambda: os.mkfifo(P + '/fifo')))
print(tryit(lambda: os.mknod(P + '/dev', 0o20666, os.makedev(1, 3))))
print(tryit(lambda: os.chmod(P + '/new.txt', 0o4755)))
print(tryit(lambda: os.link('/work/here.txt', P + '/hard')))
print(tryit(lambda: open(P + '/.git/config', 'a').write('[core]\n  fsmonitor = evil\n')))
print(tryit(lambda: open(P + '/outside-link').read()))
print(os.path.realpath(P + '/..'), sorted(os.listdir(P + '/..')))
open(P + '/run.sh', 'w').write('#!/bin/sh\necho ran\n')
os.chmod(P + '/run.sh', 0o755)
import subprocess
print(tryit(lambda: subprocess.run([P + '/run.sh'])))
"""


def project_dir(h):
    """project_dir: the code writes there (files the user's), cannot leave it
    by a link or .., cannot make a link, FIFO, device or setuid file, its
    .git is read-only, nothing runs from it; without the setting nothing is
    bound."""
    proj = os.path.join(h.base, "project")
    os.makedirs(os.path.join(proj, ".git"))
    with open(os.path.join(proj, ".git", "config"), "w") as f:
        f.write("[core]\n")
    secret = os.path.join(h.base, "secret-outside")
    with open(secret, "w") as f:
        f.write("host secret")
    os.symlink(secret, os.path.join(proj, "outside-link"))
    # the user's folder (as root: sandbox_user's, who writes there)
    owner = (h.uid, h.gid) if h.as_user else (pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
    for d, dirs, names in os.walk(proj):
        for n in dirs + names + ["."]:
            os.lchown(os.path.join(d, n) if n != "." else d, *owner)
    os.chmod(proj, 0o755)
    m = h.mcp()
    sid, _ = open_ws(m, "noproject", lang="python")
    assert out(m, sid, "import os\nprint(os.path.exists('/work/project'))", "python").strip() == "False"
    m.close()
    m = h.mcp("--project-dir", proj)
    st = m.status()
    assert st["project"]["bound"] is True and st["project"]["at"] == "/work/project", st["project"]
    sid, _ = open_ws(m, "withproject", lang="python")
    ok(m, "file_write", {"session_id": sid, "path": "here.txt", "content": "x"})
    o = out(m, sid, PROJECT_CODE, "python").splitlines()
    assert o[0] == "done", o
    assert o[1:5] == ["EACCES", "EACCES", "EPERM", "EPERM"] or o[1:5] == ["EACCES", "EACCES", "EACCES", "EPERM"], o
    assert o[5] == "EXDEV", o
    assert o[6] in ("EROFS", "EACCES"), o
    assert o[7] == "ENOENT", o  # the link resolves inside the sandbox, where that path is not
    assert o[8].startswith("/work ["), o
    assert o[9] in ("EACCES", "EPERM"), o  # noexec
    new = os.path.join(proj, "new.txt")
    assert open(new).read() == "from the sandbox"
    st_new = os.stat(new)
    assert st_new.st_uid == owner[0], st_new
    assert not st_new.st_mode & 0o6000
    for n in ("link", "fifo", "dev", "hard"):
        assert not os.path.lexists(os.path.join(proj, n)), n
    assert open(os.path.join(proj, ".git", "config")).read() == "[core]\n"
    # the project folder is not part of the workspace
    ok(m, "session_close", {"session_id": sid})
    assert not os.path.exists(os.path.join(h.store, "withproject", "files", "project"))
    m.close()


def cli_export_import_rm(h):
    """sagebox workspaces list/show/export/import/rm."""
    m = h.mcp()
    sid, _ = open_ws(m, "paper", lang="python")
    out(m, sid, "import os\nos.makedirs('/work/a/b')\nopen('/work/a/b/c.txt','w').write('c')\n"
                "open('/work/tool.sh','w').write('#!/bin/sh')\nos.chmod('/work/tool.sh', 0o755)\nprint()", "python")
    p = h.cli("list", "--json")
    assert p.returncode == 0, p.stderr
    assert [w["name"] for w in json.loads(p.stdout)] == ["paper"]
    p = h.cli("rm", "paper")
    assert p.returncode != 0 and "in use" in p.stderr, p.stderr
    ok(m, "session_close", {"session_id": sid})
    p = h.cli("show", "paper")
    assert p.returncode == 0 and "a/b/c.txt" in p.stdout, p.stdout + p.stderr
    dest = os.path.join(h.base, "exported")
    os.mkdir(dest)  # (empty, the user's: export writes into a new or empty directory)
    os.chown(dest, h.uid, h.gid)
    p = h.cli("export", "paper", dest)
    assert p.returncode == 0, p.stderr
    assert open(os.path.join(dest, "a", "b", "c.txt")).read() == "c"
    assert os.stat(os.path.join(dest, "tool.sh")).st_mode & 0o111
    p = h.cli("export", "paper", dest)
    assert p.returncode != 0 and "not empty" in p.stderr, p.stderr
    src = os.path.join(h.base, "toimport")
    os.makedirs(os.path.join(src, "d"))
    with open(os.path.join(src, "d", "f.txt"), "w") as f:
        f.write("imported")
    os.symlink("/etc/passwd", os.path.join(src, "link"))
    for d, dirs, names in os.walk(src):
        for n in dirs + names + ["."]:
            os.lchown(os.path.join(d, n) if n != "." else d, h.uid, h.gid)
    p = h.cli("import", src, "copy")
    assert p.returncode == 0 and "skipped link" in p.stdout, p.stdout + p.stderr
    p = h.cli("import", src, "copy")
    assert p.returncode != 0 and "exists" in p.stderr
    sid, _ = open_ws(m, "copy", lang="python")
    assert out(m, sid, "import os\nprint(open('d/f.txt').read(), os.path.lexists('link'))", "python").strip() == \
        "imported False"
    ok(m, "session_close", {"session_id": sid})
    p = h.cli("rm", "paper")
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(os.path.join(h.store, "paper"))
    p = h.cli("list")
    assert "copy" in p.stdout and "paper" not in p.stdout
    m.close()


class _Hostile:
    """A pickle that runs a command when it is loaded."""
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


def hostile_state(h):
    """A hostile save file (a pickle that runs a command when loaded) runs
    only in the sandbox that restores it: nothing on the host, and the open
    reports the file instead of failing."""
    m = h.mcp()
    sid, _ = open_ws(m, "hostile", lang="python")
    ok(m, "session_close", {"session_id": sid})
    m.close()
    on_host = os.path.join(h.base, "ran-on-host")
    d = os.path.join(h.store, "hostile", "files", ".sagebox")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "session.pickle"), "wb") as f:
        f.write(pickle.dumps(_Hostile("touch /work/ran-inside; touch %s; id -u > /work/uid" % on_host)))
    if h.as_user:
        for p in (d, os.path.join(d, "session.pickle")):
            os.lchown(p, h.uid, h.gid)
    m = h.mcp()
    sid, r = open_ws(m, "hostile", lang="python", restore=True)
    assert "not one sagebox wrote" in text(r), text(r)
    assert not os.path.exists(on_host)
    o = out(m, sid, "import os\nprint(os.path.exists('/work/ran-inside'), os.path.exists(%r))" % on_host, "python")
    assert o.strip() == "True False", o
    ok(m, "session_close", {"session_id": sid})
    assert not os.path.exists(on_host)
    m.close()


CASES = ("kill_then_restore", "term_all_saves", "idle_expiry_saves", "one_session_at_a_time", "size_cap", "specials_not_kept",
         "project_dir", "cli_export_import_rm", "hostile_state")


def tests():
    """test_CASE(host) for each case, for a test module's globals() (its
    `host` fixture says where they run)."""
    out = {}
    for name in CASES:
        def case_test(host, _case=globals()[name]):
            _case(host)
        case_test.__name__ = "test_" + name
        case_test.__doc__ = globals()[name].__doc__
        out[case_test.__name__] = case_test
    return out
