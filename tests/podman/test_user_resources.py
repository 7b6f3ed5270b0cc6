"""Podman: a job holding what the kernel counts per host
user must not make it fail for other containers or for the host user's own
processes. Every container of the host user lives in podman's one user
namespace; each runs as a uid of its own there, so their counts are apart.
The attack: tests/lib/user_resources_probe.py."""
import subprocess

import user_resources_probe as urp

from conftest import IMAGE, SAGEBOX, as_user, as_user_argv, run_code

SIGPENDING = 128  # sandbox/user_resources.c


def test_a_container_cannot_starve_other_containers_or_the_host_user():
    hog = subprocess.Popen(as_user_argv([SAGEBOX, "run", "--lang", "python", "--backend", "podman", "--image",
                                         IMAGE, "--timeout", "240", "-"]),
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hog.stdin.write(urp.hog_code())
    hog.stdin.close()
    try:
        assert urp.holding(SIGPENDING), "the hog never held its queued signals"
        # another container (warm and fresh) still gets a timer and a
        # locked segment (inotify and keys are refused by the policy)
        other = {}
        for isolation in ("fresh", "warm"):
            res, p = run_code(urp.CHECK, args=["--isolation", isolation])
            other[isolation] = urp.last_json(res["stdout"]) if res else p.stderr.decode()
        # and so does a process of the host user on the host, inotify and keys included
        p = as_user(["/usr/bin/python3", "-c", urp.CHECK])
        host = urp.last_json(p.stdout.decode() + p.stderr.decode())
        assert (other, host) == ({"fresh": urp.IN_SANDBOX, "warm": urp.IN_SANDBOX}, urp.ON_HOST)
    finally:
        urp.release()
        out = hog.stdout.read()
        hog.wait(timeout=300)
    urp.assert_hog_held_only_its_share(urp.last_json(out), SIGPENDING)
