"""`sagebox status` says what the native sandbox would enforce here, and its
text says the same as its JSON."""
import json
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN


def test_status_reports_native_capabilities():
    st = json.loads(subprocess.run([BIN, "status", "--json"], capture_output=True, text=True, timeout=60).stdout)
    be = st["backend"]
    assert be["name"] == "native" and be["available"] is True
    assert be["user_namespaces"]["available"] is True
    assert be["seccomp"]["available"] is True
    assert be["landlock"]["abi"] >= 0
    assert be["cgroup"]["mode"] in ("v1", "v2", "none")
    if be["cgroup"]["mode"] == "none":
        assert be["would_enforce"]["cpus"] is None
    assert "present" in be["sage"] and "present" in be["python"]


def status_as(user=None):
    """(text, report) of `sagebox status`, run as user (root only) from a
    copy of the binary that user can execute."""
    cmd = [BIN]
    with tempfile.TemporaryDirectory() as d:
        if user:
            os.chmod(d, 0o755)
            shutil.copy(BIN, os.path.join(d, "sagebox"))
            cmd = ["runuser", "-u", user, "--", os.path.join(d, "sagebox")]
        run = lambda *a: subprocess.run(cmd + ["status", *a], capture_output=True, text=True, timeout=60, cwd="/")
        text, js = run(), run("--json")
    assert text.returncode == js.returncode, text.stderr
    return text.stdout, json.loads(js.stdout)


def check_text_matches_report(text, st):
    be = st["backend"]
    first = text.splitlines()[0]
    assert first.startswith("sagebox: the sandbox works here: native backend"), first
    on = text.partition("\nEnforced:\n")[2].split("\n\n")[0]
    off = text.partition("\nNot enforced:\n")[2].split("\n\n")[0]
    if be.get("started_as_root"):
        u = be["sandbox_user"]
        assert f"code runs as {u['name']} (host uid {u['host_uid']})" in on
    else:
        assert "code runs under your uid" in on
    for what, row in (("memory", "memory"), ("pids", "processes")):
        by = be["would_enforce"][what]
        assert f"by {by}" in on, (what, on)
    if be["would_enforce"]["cpus"]:
        assert f"by {be['would_enforce']['cpus']}" in on
    else:
        assert "cpus" in off and "not limited" in off
    if be["cgroup"]["mode"] == "none":
        assert "memory total" in off and be["cgroup"]["why_none"].split(";")[0] in " ".join(off.split())
    # The verdict counts the rows of "Not enforced", and each says how to fix it.
    rows = [l for l in off.splitlines() if l.startswith("  ") and l[2] != " "]
    if rows:
        n = len(rows)
        assert first.endswith(f"; {n} thing{' is' if n == 1 else 's are'} not enforced (below)."), first
        assert off.count("fix: ") == n, off
    else:
        assert "\nNot enforced: nothing" in text
    if be["landlock"]["available"]:
        assert f"ABI {be['landlock']['abi']}" in on


def test_status_text_says_what_the_report_says():
    text, st = status_as()
    check_text_matches_report(text, st)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root to run status as nobody")
def test_status_text_without_root_names_what_is_not_enforced_and_the_fix():
    """As an unprivileged user (no cgroup of its own on most hosts), the
    text lists what is missing and how to fix it."""
    pwd.getpwnam("nobody")
    text, st = status_as("nobody")
    assert not st["backend"].get("started_as_root")
    check_text_matches_report(text, st)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root to run status as nobody")
def test_sage_is_found_for_a_user_with_more_processes_than_the_pids_limit():
    """Sagebox asks the host's own sage where its Python is, as the user
    who runs it. RLIMIT_NPROC counts every process of that user (a desktop
    has hundreds; other sandboxes run as nobody too), so under the pids
    limit the ask could not fork, and sagebox found no Sage at all. Seen in
    fresh-check's run of this suite while sessions ran as nobody."""
    sleepers = [subprocess.Popen(["runuser", "-u", "nobody", "--", "sleep", "120"]) for _ in range(24)]
    try:
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o755)
            shutil.copy(BIN, os.path.join(d, "sagebox"))
            r = subprocess.run([shutil.which("runuser"), "-u", "nobody", "--", os.path.join(d, "sagebox"), "status", "--json",
                                "--pids", "16"], capture_output=True, text=True, timeout=120, cwd="/",
                               env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": d + "/no-cache"})
        st = json.loads(r.stdout)
        assert "error" not in st.get("sage_python", {}), st.get("sage_python")
        assert st["sage_python"]["python"].startswith("/"), st["sage_python"]
    finally:
        for p in sleepers:
            p.kill()
        for p in sleepers:
            p.wait()
