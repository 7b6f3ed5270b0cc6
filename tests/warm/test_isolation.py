"""Jobs on one warm worker cannot see or harm each other."""
import time

from conftest import FACTOR, FACTORED, host_pids_with, ok


def test_results_say_warm(healthy):
    r = healthy.run("print(1)")
    assert ok(r), r
    sb = r["sandbox"]
    assert sb["isolation"] == "warm" and sb["backend"] == "native"
    assert sb["warm"]["worker"] == "python"
    assert sb["memory"]["limit"] == "256m" and sb["memory"]["worker_sandbox_limit"]


def test_globals_do_not_leak_python(healthy):
    r = healthy.run("secret = 42\nimport math\nmath.pi = 3\nimport builtins\nbuiltins.open = None\n")
    assert ok(r), r
    r = healthy.run("import math\nprint('secret' in globals(), math.pi, open is None)")
    assert r["stdout"] == "False 3.141592653589793 False\n", r


def test_globals_do_not_leak_sage(healthy):
    r = healthy.run("x = 5\nsecret = 42\nQQ.foo = 1\n", "sage")
    assert ok(r), r
    r = healthy.run("print(type(x).__name__, 'secret' in globals(), hasattr(QQ, 'foo'))", "sage")
    assert ok(r) and r["stdout"] == "Expression False False\n", r


# What a job sees of its namespace: every name, and Sage's own x (a symbolic
# variable) and R (the R interface's class), which the pre-touch cells rebind
# (R.<x> = QQ[]) in a dict of their own.
NAMESPACE_PROBE = ("import hashlib\n"
                   "names = sorted(k for k in globals() if k not in ('hashlib', 'names'))\n"
                   "print(len(names), hashlib.sha256(' '.join(names).encode()).hexdigest())\n"
                   "print(type(x).__name__, type(R).__name__, repr(QQ))\n")


def test_job_namespace_is_pristine_sage_after_the_pretouch(healthy):
    """The job runs in the worker's Sage namespace itself (its fork's copy),
    not a copy of it: what a spare ran while it waited for its job must not
    be there, and it must be what a fresh `sage -q` script gets."""
    from conftest import sagebox_run
    fresh, _ = sagebox_run(NAMESPACE_PROBE, "sage", args=("--backend", "native", "--isolation", "fresh"))
    assert ok(fresh), fresh
    count, _, line2 = fresh["stdout"].partition(" ")
    assert int(count) > 1000 and line2.splitlines()[1] == "Expression type Rational Field", fresh
    # Each call after a pause, so that its child was forked and ran the
    # pre-touch ahead (the first ones may come while the worker still runs
    # its warm-ups, which drop the spare).
    for _ in range(4):
        time.sleep(1.5)
        warm = healthy.run(NAMESPACE_PROBE, "sage")
        assert ok(warm) and warm["stdout"] == fresh["stdout"], (warm, fresh["stdout"])


def test_job_may_rebind_and_delete_sage_names(healthy):
    """The namespace is the job's own: del of a predefined name, var(), a
    function seeing the cell's names; none of it reaches the next job."""
    r = healthy.run("del x\nprint('x' in globals())\nvar('y')\nz = y^2\n"
                    "def f():\n    return z + 1\nprint(f())\nQQ = 7\n", "sage")
    assert ok(r) and r["stdout"] == "False\ny^2 + 1\n", r
    r = healthy.run("print(type(x).__name__, 'y' in globals(), 'z' in globals(), repr(QQ))", "sage")
    assert ok(r) and r["stdout"] == "Expression False False Rational Field\n", r


def test_work_dir_and_tmp_fresh_per_job(healthy):
    r = healthy.run(r"""
import os, sys
open("left.txt", "w").write("x")
os.makedirs("d/e", exist_ok=True)
os.chmod("d", 0)
open("/tmp/left-in-tmp", "w").write("x")
open("/tmp/home/.left-in-home", "w").write("x")
open("/dev/shm/left-in-shm", "w").write("x")
os.symlink("/etc/passwd", "link")
print(os.getcwd(), oct(os.stat(".").st_mode & 0o777))
os.chmod(".", 0o500)
""")
    assert ok(r) and r["stdout"].startswith("/tmp/work "), r
    mode = r["stdout"].split()[1]
    r = healthy.run(r"""
import os
print(os.getcwd(), sorted(os.listdir(".")), os.path.exists("/tmp/left-in-tmp"),
      os.path.exists("/tmp/home/.left-in-home"), os.path.exists("/dev/shm/left-in-shm"),
      oct(os.stat(".").st_mode & 0o777))
""")
    assert r["stdout"] == f"/tmp/work [] False False False {mode}\n", r


def test_work_dir_removed_and_replaced_by_job(healthy):
    r = healthy.run("import os, shutil\nos.chdir('/tmp')\nos.rmdir('/tmp/work')\nos.symlink('/etc', '/tmp/work')\n")
    # (the work dir may be a mount point, then it cannot be removed: fine)
    r = healthy.run("import os\nprint(os.getcwd(), os.path.islink('/tmp/work'), os.listdir('.'))")
    assert r["stdout"] == "/tmp/work False []\n", r


def test_sysv_ipc_does_not_survive(healthy):
    code = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
if len(open("/proc/sysvipc/shm").read().splitlines()) > 1:
    print("leftover")
shmid = libc.shmget(0x5ab0, 4096, 0o1600)  # IPC_CREAT | 0600
print("created" if shmid >= 0 else "failed")
"""
    r = healthy.run(code)
    assert r["stdout"] == "created\n", r
    r = healthy.run("print(len(open('/proc/sysvipc/shm').read().splitlines()) - 1)")
    assert r["stdout"] == "0\n", r


def test_random_numbers_differ_between_jobs(healthy):
    a = healthy.run("import random, os\nprint(random.random(), os.urandom(8).hex())")["stdout"]
    b = healthy.run("import random, os\nprint(random.random(), os.urandom(8).hex())")["stdout"]
    assert a != b
    a = healthy.run("print(random(), ZZ.random_element(10^30), randint(1, 10^9))", "sage")["stdout"]
    b = healthy.run("print(random(), ZZ.random_element(10^30), randint(1, 10^9))", "sage")["stdout"]
    assert a and a != b


def test_setsid_double_fork_does_not_survive_the_job(healthy):
    marker = f"{time.time_ns() % 10**9}.77"
    r = healthy.run(f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        os.execv("/bin/sleep", ["/bin/sleep", "{marker}"])
    os._exit(0)
time.sleep(0.3)
print("parent exits", flush=True)
""")
    assert ok(r) and "parent exits" in r["stdout"], r
    # Killed before the result was sent; allow the kernel a moment to reap.
    deadline = time.time() + 2
    while host_pids_with(marker) and time.time() < deadline:
        time.sleep(0.05)
    assert host_pids_with(marker) == [], "a grandchild survived its job"
    r = healthy.run("import os\nprint(sorted(open(f'/proc/{p}/cmdline','rb').read().split(b'\\0')[0].decode() "
                    "for p in os.listdir('/proc') if p.isdigit()))")
    assert marker not in r["stdout"] and "sleep" not in r["stdout"], r


def test_background_process_holding_stdout_is_killed(healthy):
    t0 = time.time()
    r = healthy.run("sleep 100 &\necho started", "shell")
    assert r["stdout"] == "started\n" and r["exit_code"] == 0, r
    assert time.time() - t0 < 5


def test_results_match_fresh_mode_for_exits_and_errors(healthy):
    from conftest import sagebox_run
    cases = [
        ("import sys; sys.exit(3)", "python"),
        ("raise ValueError('boom')", "python"),
        # non-dumpable: the worker may not read its exit code in /proc
        ("import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); raise ValueError('boom')", "python"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "python"),
        ("x = 2\nx * 21", "python"),
        ("x = 2\nx * 21;", "python"),
        ("import sys; print('out'); print('err', file=sys.stderr); sys.exit('bye')", "python"),
        ("echo hi; echo there >&2; exit 7", "shell"),
        ("1/0", "sage"),
        ("2^100", "sage"),
        (FACTOR, "sage"),
        ("def f(:\n  pass", "python"),
    ]
    for code, lang in cases:
        warm = healthy.run(code, lang)
        fresh, _ = sagebox_run(code, lang, args=("--backend", "native", "--isolation", "fresh"))
        for k in ("ok", "exit_code", "signal", "stdout", "stderr", "timed_out", "output_limit_exceeded"):
            assert warm[k] == fresh[k], (code, k, warm[k], fresh[k])
        assert fresh["sandbox"]["isolation"] == "fresh" and warm["sandbox"]["isolation"] == "warm"
        if code == FACTOR:
            assert FACTORED in warm["stdout"]


ARGV = ("import sys, argparse\nap = argparse.ArgumentParser()\nap.add_argument('--n', type=int, default=7)\n"
        "print(sys.argv, ap.parse_args().n, sys.orig_argv[1:])\n")


def test_job_sees_the_argv_of_a_script(healthy):
    """code Saw the driver's own arguments (['-c', 'once',
    'python']), so argparse failed. It sees what `python3 <cell>` gives."""
    from conftest import sagebox_run
    want = "['<cell>'] 7 ['<cell>']\n"
    for lang in ("python", "sage"):
        r = healthy.run(ARGV, lang)
        assert ok(r) and r["stdout"] == want, (lang, r)
        fresh, _ = sagebox_run(ARGV, lang, args=("--backend", "native", "--isolation", "fresh"))
        assert fresh["stdout"] == want, (lang, fresh)
    # a shell script's $0 is its path (as `sh file.sh` gives), with no arguments
    sh = 'echo "$0" "$#"'
    r = healthy.run(sh, "shell")
    fresh, _ = sagebox_run(sh, "shell", args=("--backend", "native", "--isolation", "fresh"))
    assert r["stdout"] == fresh["stdout"] == "/tmp/work/.sagebox-script.sh 0\n", (r, fresh)


def test_large_code_and_output_pass_through(healthy):
    """Protocol v2 moves the code and the output with splice, in pieces
    larger than a pipe holds. (`sagebox run`: MCP limits code to 50000
    characters.)"""
    from conftest import sagebox_run
    blob = "x" * (3 << 20)
    code = f"s = {blob!r}\nimport sys\nsys.stdout.write(s[:len(s) // 2])\nprint(len(s))\n"
    r, p = sagebox_run(code, "python", args=("--backend", "native", "--isolation", "warm"))
    assert r["exit_code"] == 0 and r["stdout"].endswith(str(3 << 20) + "\n"), p.stderr[-2000:]
    assert r["sandbox"]["isolation"] == "warm" and r["truncated"]["stdout"] is True
    r = healthy.run("", "python")
    assert ok(r) and r["stdout"] == "", r
