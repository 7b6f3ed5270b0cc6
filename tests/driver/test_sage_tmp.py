"""sage_tmp: Sage 9's exit handler for SAGE_TMP is dropped in a fork that
never made its directory, kept in one that did, and never touched where
the worker's check did not find Sage 9's layout. Each test runs a fresh
interpreter with the real Sage (its exit handlers are the process's)."""
import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.abspath(os.path.join(HERE, "..", "..", "src", "worker"))

# In a fork: the driver's exit path (skip_unmade, then the handlers), then
# whether the fork's SAGE_TMP exists, and whether the directory that holds
# every process's SAGE_TMP was modified meanwhile.
FORK = """
    import atexit, os, time
    from sage.misc.misc import DOT_SAGE, HOSTNAME
    parent = os.path.join(DOT_SAGE, "temp", HOSTNAME)
    os.makedirs(parent, exist_ok=True)
    def fork(body):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            before = os.stat(parent).st_mtime_ns
            body()
            time.sleep(0.05)  # a directory made below gets a later time
            sage_tmp.skip_unmade()
            atexit._run_exitfuncs()
            mine = os.path.join(parent, str(os.getpid()))
            os.write(w, ("%s %s" % (os.path.lexists(mine), os.stat(parent).st_mtime_ns != before)).encode())
            os._exit(0)
        os.close(w)
        out = os.read(r, 100).decode()
        os.waitpid(pid, 0)
        return out
"""


def run(body, dot_sage):
    src = ("import sys\nsys.path.insert(0, %r)\n" % WORKER + textwrap.dedent(FORK) + textwrap.dedent(body))
    p = subprocess.run([sys.executable, "-I", "-c", src], capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, DOT_SAGE=dot_sage))
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def test_a_fork_that_never_used_sage_tmp_makes_nothing_and_one_that_did_has_it_removed(tmp_path):
    out = run("""
        import sage.all_cmdline
        from driver import sage_tmp
        print(sage_tmp.check())
        print(fork(lambda: None))
        print(fork(lambda: open(sage.all_cmdline.tmp_filename(), "w").write("x")))
    """, str(tmp_path / "dot-sage"))
    # check: on; unused: not made, the parent untouched; used: removed at exit
    assert out == ["None", "False False", "False True"], out


def test_without_sage_9s_layout_the_handler_is_left_alone(tmp_path):
    out = run("""
        from driver import sage_tmp
        print(sage_tmp.check())          # no Sage imported
        import sage.all_cmdline
        from sage.misc import misc
        from sage.misc.lazy_string import lazy_string
        def elsewhere():                 # another layout, made when used as Sage 9's is
            d = os.path.join(parent, "other-%d" % os.getpid())
            os.makedirs(d, exist_ok=True)
            return d
        misc.SAGE_TMP = lazy_string(elsewhere)
        print(sage_tmp.check())
        print(fork(lambda: None))        # Sage's handler ran: made and removed
    """, str(tmp_path / "dot-sage"))
    assert out == ["not Sage 9's SAGE_TMP", "SAGE_TMP is not DOT_SAGE/temp/HOSTNAME/PID", "False True"], out
