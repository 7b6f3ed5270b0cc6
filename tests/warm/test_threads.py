"""Threads in warm jobs: a job leaves as `python3 file.py` does, waiting
for its non-daemon threads before its atexit handlers, whether or not the
worker had imported threading. The Python worker does not import it (its
at-fork hook would run in every job's fork: zygote.run_worker), so a
Python job starts without it, as a fresh `python3 -I file.py` does."""
import subprocess

from conftest import ok

# A non-daemon thread outlives the main code by 0.3 s; it must be waited
# for, and the atexit handler runs after it, as at a script's exit.
LATE_THREAD = ("import atexit, threading, time\n"
               "atexit.register(lambda: print('atexit', flush=True))\n"
               "def late():\n"
               "    time.sleep(0.3)\n"
               "    print('late', flush=True)\n"
               "threading.Thread(target=late).start()\n"
               "print('early', flush=True)\n")
AS_A_SCRIPT = "early\nlate\natexit\n"


def test_a_python_script_sees_the_same_as_a_python_job(mcp):
    """What the job sees is what a fresh interpreter sees."""
    probe = "import sys\nprint('threading' in sys.modules)\n"
    fresh = subprocess.run(["/usr/bin/python3", "-I", "-c", probe], capture_output=True, text=True, check=True)
    r = mcp.run(probe, "python")
    assert ok(r), r
    # (False here; True only where the system's site imports it itself)
    assert r["stdout"] == fresh.stdout, (r, fresh.stdout)


def test_a_python_job_waits_for_its_non_daemon_thread(mcp):
    for _ in range(2):  # the second from a spare forked ahead of it
        r = mcp.run(LATE_THREAD, "python")
        assert ok(r), r
        assert r["stdout"] == AS_A_SCRIPT, r


def test_a_sage_job_waits_for_its_non_daemon_thread(mcp):
    # (Sage imports threading in the worker: the other path)
    code = LATE_THREAD.replace("0.3", "int(3) / int(10)")  # Python numbers, not Sage's
    r = mcp.run(code, "sage")
    assert ok(r), r
    assert r["stdout"] == AS_A_SCRIPT, r


def test_a_thread_started_without_threading_is_not_waited_for(mcp):
    """A daemon thread, started through _thread (no threading module at
    all): the job ends without waiting for it, as a script does."""
    r = mcp.run("import _thread, time\n_thread.start_new_thread(time.sleep, (30,))\nprint('done')\n",
                "python", timeout_s=20)
    assert ok(r), r
    assert r["stdout"] == "done\n", r
