"""Native: a job holding what the kernel counts per host
user must not make it fail for other sandboxes or for the host user's own
processes. See tests/lib/user_resources_probe.py for the attack."""
import os
import subprocess

import user_resources_probe as urp

from conftest import BIN, run

SIGPENDING = 128  # sandbox/user_resources.c


def host_check_as_sandbox_uid():
    """CHECK as a host process of the uid the sandbox maps to: nobody when
    started as root (the default sandbox_user), else ourselves."""
    argv = ["/usr/bin/python3", "-c", urp.CHECK]
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "nobody", "--"] + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    return urp.last_json(p.stdout + p.stderr)


def test_a_job_cannot_starve_other_sandboxes_or_the_host_user():
    hog = subprocess.Popen([BIN, "run", "--lang", "python", "--timeout", "240", "-"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hog.stdin.write(urp.hog_code())
    hog.stdin.close()
    try:
        assert urp.holding(SIGPENDING), "the hog never held its queued signals"
        # another sandbox still gets a timer and a locked segment (inotify
        # and keys are refused everywhere by the policy)
        other = urp.last_json(run(urp.CHECK).out)
        # and so does a host process of the sandbox's host uid, inotify and keys included
        host = host_check_as_sandbox_uid()
        assert (other, host) == (urp.IN_SANDBOX | urp.NATIVE_KNOWN, urp.ON_HOST | urp.NATIVE_KNOWN)
    finally:
        urp.release()
        out = hog.stdout.read()
        hog.wait(timeout=300)
    urp.assert_hog_held_only_its_share(urp.last_json(out), SIGPENDING)


def test_the_sandbox_reports_its_per_user_limits():
    res, _ = __import__("conftest").run_json("print(1)")
    pur = res["sandbox"]["per_user_resources"]
    assert pur["sigpending"] == {"limit": SIGPENDING, "enforced_by": "rlimit (the whole sandbox: its own user namespace)"}
    assert pur["max_inotify_instances"]["limit"] == 0


def test_a_job_holds_at_most_64_ptys():
    """Every devpts instance but the host's shares kernel.pty.max less its
    reserve (3072): one job must not take them all from the others."""
    r = run("import pty\nfds = []\ntry:\n    while len(fds) < 4000:\n        fds.append(pty.openpty())\n"
            "except OSError as e:\n    print(len(fds), e.errno)\n")
    n, err = r.out.split()
    assert int(n) == 64, r
