"""Sage 9's SAGE_TMP in warm jobs (src/worker/driver/sage_tmp.py): a job
that never used its temporary directory does not make it at exit only to
remove it; a job that used it still has it removed, and a job's own exit
handlers still run."""
from conftest import ok, start_mcp, wait_idle

# The directory that holds every process's SAGE_TMP, its modification
# time, and this job's pid. The sleep keeps a directory made at this job's
# exit from falling into the same timestamp tick as the read.
PARENT = ("import os, time\nfrom sage.misc.misc import DOT_SAGE, HOSTNAME\n"
          "parent = os.path.join(DOT_SAGE, 'temp', HOSTNAME)\n"
          "print(os.getpid(), os.stat(parent).st_mtime_ns if os.path.isdir(parent) else None)\n"
          "time.sleep(int(50) / int(1000))\n")  # (Python ints: no Sage literal)


def _parent(m):
    r = m.run(PARENT, "sage")
    assert ok(r), (r["stdout"], r["stderr"])
    pid, mtime = r["stdout"].split()
    return pid, mtime


def test_a_job_that_never_used_sage_tmp_does_not_make_it_at_exit():
    m = start_mcp()
    try:
        wait_idle(m, "sage")
        # The worker's warm-ups (Maxima's ECL_TMP) may still make the
        # worker's own directory beside them: a pair of jobs that saw no
        # warm-up in between is enough, and none comes without the change
        # (every job's exit made and removed a directory there).
        pairs = []
        for _ in range(6):
            first_pid, before = _parent(m)
            _, after = _parent(m)
            pairs.append((before, after))
            if before != "None" and before == after:
                break
        assert any(b != "None" and b == a for b, a in pairs), pairs
        r = m.run("import os\nfrom sage.misc.misc import DOT_SAGE, HOSTNAME\n"
                  f"print(os.path.lexists(os.path.join(DOT_SAGE, 'temp', HOSTNAME, '{first_pid}')))\n", "sage")
        assert ok(r) and r["stdout"].strip() == "False", r
    finally:
        m.close()


def test_a_job_that_used_sage_tmp_has_it_removed_and_its_own_exit_handlers_run():
    m = start_mcp()
    try:
        wait_idle(m, "sage")
        r = m.run("import atexit\natexit.register(lambda: print('own handler ran'))\n"
                  "f = tmp_filename()\nopen(f, 'w').write('x')\nimport os\nprint(os.getpid(), os.path.dirname(f))\n",
                  "sage")
        assert ok(r), r
        pid, d = r["stdout"].splitlines()[0].split()
        assert d.endswith("/" + pid), r
        assert r["stdout"].splitlines()[-1] == "own handler ran", r
        r = m.run(f"import os\nprint(os.path.lexists({d!r}))\n", "sage")
        assert ok(r) and r["stdout"].strip() == "False", r
    finally:
        m.close()
