"""The checks a desktop user's sagebox must pass, run as the guest's normal
user inside a real login session (user@UID.service running, the session
bus up), started the ways a desktop starts it: from the session itself (a
terminal), inside a unit of the user's manager without Delegate= (as
LM Studio's child lives in an app-….scope: `systemd-run --user`), and with
the user's manager unreachable. Each check tries the limit from inside the
sandbox and looks at the cgroups from the outside. Usage:
    desktop_checks.py [NAME...]      (default: all; names below)"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cpu_busy  # noqa: E402

from vmlib import (CG, SAGEBOX, Mcp, cgroup_dirs_named, check, listening, pids_with, sh, status_json,
                   wait_for, wait_token)

UID = os.getuid()
USER_TREE = f"{CG}/user.slice/user-{UID}.slice"
SERVICE = ("systemd-run", "--user", "--wait", "--pipe", "--quiet")  # a user service, not delegated
APP_SCOPE = ("systemd-run", "--user", "--scope", "--quiet")        # an app's scope, not delegated
UNREACHABLE = {"DBUS_SESSION_BUS_ADDRESS": None, "XDG_RUNTIME_DIR": None}
HAVE_SAGE = os.path.exists("/usr/bin/sage")


def run_json(code, *args, prefix=(), lang="python", env=None, timeout=600):
    p = sh(*prefix, SAGEBOX, "run", "--json", "--lang", lang, *args, "-", input=code, env=env, timeout=timeout,
           check_rc=False)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"no JSON result (exit {p.returncode}): {p.stderr[-600:]}")


def enforced_by(res, what):
    return (res.get("sandbox", {}).get(what) or {}).get("enforced_by")


def all_by_cgroup(st):
    we = st["backend"]["would_enforce"]
    got = {k: we.get(k) for k in ("memory", "pids", "cpus")}
    assert all(v == "cgroup v2" for v in got.values()), (got, st["backend"].get("cgroup"))
    return got


@check("session")
def session():
    rt = os.environ.get("XDG_RUNTIME_DIR")
    assert rt and os.path.exists(f"{rt}/bus"), f"no session bus (XDG_RUNTIME_DIR={rt})"
    state = sh("systemctl", "--user", "is-system-running", check_rc=False).stdout.strip()
    assert state in ("running", "degraded"), f"user manager: {state}"
    own = open("/proc/self/cgroup").read().strip()
    ctrls = open(f"{CG}/user.slice/user-{UID}.slice/user@{UID}.service/cgroup.controllers").read().strip()
    return f"user@{UID}.service {state}, session bus at {rt}/bus, this shell in {own}; delegated to the user: {ctrls}"


def status_check(prefix, where):
    st = status_json(*prefix)
    got = all_by_cgroup(st)
    cg = st["backend"]["cgroup"]
    assert cg.get("systemd_scope") or "delegated" in cg.get("delegated", ""), cg
    text = sh(*prefix, SAGEBOX, "status", timeout=600).stdout
    assert "for the whole sandbox, by cgroup v2" in text and "memory total" not in text, text
    return f"{where}: memory, pids, cpus by {got['memory']}; {cg['delegated']}"


@check("status from the session")
def status_session():
    return status_check((), "a login session's scope")


@check("status from a user service")
def status_service():
    return status_check(SERVICE, "systemd-run --user (a unit without Delegate=)")


@check("status from an app scope")
def status_app_scope():
    return status_check(APP_SCOPE, "systemd-run --user --scope (as an app's app-….scope)")


# Twelve children touch 200 MiB each and hold it 3 s; each notes when it
# held it and when it let go, so the most held at once can be counted.
HOG = r"""
import json, os, time
N, MIB = 12, 200
r, w = os.pipe()
kids = []
for i in range(N):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        b = bytearray(MIB << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        t = time.time()
        time.sleep(3)
        os.write(w, f"{t} {time.time()}\n".encode())
        os._exit(0)
    kids.append(pid)
os.close(w)
killed = sum(1 for k in kids if os.WIFSIGNALED(os.waitpid(k, 0)[1]))
spans = [tuple(map(float, l.split())) for l in os.fdopen(r).read().split("\n") if l]
most = max((sum(1 for a, b in spans if a <= t < b) for t, _ in spans), default=0)
print(json.dumps({"held": len(spans), "killed": killed, "most_at_once": most}))
"""


def hog(prefix, where):
    res = run_json(HOG, "--memory", "512m", "--pids", "64", "--timeout", "120", prefix=prefix)
    assert enforced_by(res, "memory") == "cgroup v2", res.get("sandbox", {}).get("memory")
    lines = [l for l in res["stdout"].splitlines() if l.startswith("{")]
    assert lines, f"the hog printed no verdict: {res['stdout'][-300:]} {res['stderr'][-300:]} signal={res.get('signal')}"
    p = json.loads(lines[-1])
    assert p["most_at_once"] * 200 <= 512 and p["killed"] >= 1, (p, "the total was not held")
    return (f"{where}: 12 x 200 MiB under 512m: at most {p['most_at_once']} held at once, {p['killed']} killed "
            f"by the cgroup's OOM, {p['held']} finished")


@check("memory total from a user service")
def memory_service():
    return hog(SERVICE, "systemd-run --user")


@check("memory total from the session")
def memory_session():
    return hog((), "login session")


@check("fork bomb stops at pids")
def fork_bomb():
    code = r"""
import os, time, errno
n, err = 0, None
while n < 2000:
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno); break
    if pid == 0:
        time.sleep(30); os._exit(0)
    n += 1
print(n, err, flush=True)
os._exit(0)
"""
    res = run_json(code, "--pids", "64", "--timeout", "60")
    assert enforced_by(res, "pids") == "cgroup v2", res.get("sandbox", {}).get("pids")
    n, err = res["stdout"].split()
    assert err == "EAGAIN" and int(n) < 64, res["stdout"]
    return f"forked {n} then {err} under pids 64 (cgroup v2)"


# The sandbox suites' CPU probe (tests/lib/cpu_busy.py), busy for 6 s: long
# enough that one period's burst is within the 20 % asked.
BUSY = cpu_busy.BUSY.replace("time.time() + 1.5", "time.time() + 6")
assert BUSY != cpu_busy.BUSY


@check("cpus 0.5 within 20%")
def cpus_half():
    res = run_json(BUSY, "--cpus", "0.5", "--timeout", "120")
    assert enforced_by(res, "cpus") == "cgroup v2", res.get("sandbox", {}).get("cpus")
    p = json.loads(res["stdout"].strip().splitlines()[-1])
    ratio = p["cpu"] / p["wall"]
    assert abs(ratio - 0.5) <= 0.1, f"two busy processes used {ratio:.3f} CPU per wall second"
    return f"two busy processes for {p['wall']:.1f} s used {p['cpu']:.2f} CPU-s: {ratio:.3f} cores (0.5 asked)"


def leftovers():
    return cgroup_dirs_named("sagebox", USER_TREE)


@check("cgroups gone after the call")
def gone_after():
    before = leftovers()
    assert not before, f"left before the call: {before}"
    res = run_json("print(1)")
    assert res["stdout"].strip() == "1", res
    left = wait_for(lambda: not leftovers(), 10)
    assert left, f"left after the call: {leftovers()}"
    return f"after `sagebox run`: no sagebox cgroup and no sagebox scope under {USER_TREE}"


def start_sleeper(marker, *args, prefix=()):
    p = subprocess.Popen([*prefix, SAGEBOX, "run", "--lang", "shell", "--timeout", "300", *args, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write(f"/bin/sleep {marker}\necho done-{marker}\n")
    p.stdin.close()
    assert wait_for(lambda: pids_with(marker), 120), f"the sleeper {marker} never started"
    return p


@check("SIGKILL of sagebox, then the next start")
def sigkill():
    marker = f"{time.time_ns() % 10**9}.1"
    p = start_sleeper(marker)
    mine = [d for d in leftovers() if f".{p.pid}." in os.path.basename(d) or f"-{p.pid}-" in os.path.basename(d)]
    assert mine, f"no cgroup of sagebox {p.pid}: {leftovers()}"
    p.kill()
    p.wait()
    assert wait_for(lambda: not pids_with(marker), 15), "the sandbox outlived sagebox"
    status_json()  # the next start
    left = wait_for(lambda: not [d for d in leftovers() if str(p.pid) in d], 15)
    assert left, f"left after SIGKILL and the next start: {leftovers()}"
    return f"sandbox gone with sagebox {p.pid} (SIGKILL); its cgroups {[os.path.basename(d) for d in mine]} gone"


def two(prefix, where):
    marker = f"{time.time_ns() % 10**9}.2"
    a = start_sleeper(marker, prefix=prefix)
    b = run_json("print(2)", prefix=prefix)
    assert b["stdout"].strip() == "2", b
    assert pids_with(marker), "the first sagebox's sandbox died when the second ran"
    time.sleep(1)
    held = [d for d in leftovers() if any(os.path.exists(f"{d}/{f}") for f in ("memory.max",))]
    assert held, f"the first sandbox's cgroup is gone: {leftovers()}"
    os.kill(pids_with(marker)[0], signal.SIGTERM)
    out, err = a.stdout.read(), a.stderr.read()
    a.wait(timeout=60)
    assert f"done-{marker}" in out, (out, err)
    return f"{where}: the second sagebox ran and ended beside the first, whose cgroup and job stayed"


@check("two sageboxes, each its own scope")
def two_scopes():
    return two((), "two login-session sageboxes")


@check("two sageboxes in one delegated cgroup")
def two_shared():
    # Both in one cgroup already delegated: they share its sandboxes'
    # directory, and each removes only stale cgroups of dead sageboxes.
    code = (f"{SAGEBOX} run --lang shell --timeout 300 - <<< '/bin/sleep 40.{UID}3; echo done-a' & "
            f"sleep 20; {SAGEBOX} run --lang python - <<< 'print(2)'; "
            f"pgrep -f 40.{UID}3 >/dev/null && echo a-alive; wait")
    p = sh("systemd-run", "--user", "--scope", "--quiet", "-p", "Delegate=yes", "bash", "-c", code, timeout=600)
    assert p.stdout.split() == ["2", "a-alive", "done-a"], p.stdout
    return "in one systemd-run --scope -p Delegate=yes: the second ran while the first's sandbox lived on"


@check("user manager unreachable: rlimits, said so")
def unreachable():
    st = status_json(env=UNREACHABLE)
    be = st["backend"]
    assert be["cgroup"]["mode"] == "none", be["cgroup"]
    assert be["would_enforce"]["memory"].startswith("rlimit"), be["would_enforce"]
    assert be["would_enforce"]["cpus"] is None, be["would_enforce"]
    why = be["cgroup"]["why_none"]
    assert "not reachable" in why, why
    text = sh(SAGEBOX, "status", env=UNREACHABLE).stdout
    assert "memory total" in text and "not delegated" in text, text
    res = run_json("print(3)", env=UNREACHABLE)
    assert enforced_by(res, "memory") == "rlimit DATA" and res["stdout"].strip() == "3", res.get("sandbox")
    return f"status: memory per process (rlimit), cpus not limited; why: {why}"


@check("systemctl --user start sagebox")
def user_unit():
    url = "http://127.0.0.1:8080/mcp"
    token = os.path.expanduser("~/.local/state/sagebox/token")
    sh("systemctl", "--user", "start", "sagebox")
    try:
        tok = wait_token(token, url, 120)
        m = Mcp(url, tok)
        m.initialize()
        out = m.call("run_python", code="import os; print(6*7)")
        assert "42" in out, out
        st = m.call("sandbox_status")
        assert "by cgroup v2" in st, st
        cg = sh("systemctl", "--user", "show", "-p", "ControlGroup", "--value", "sagebox").stdout.strip()
    finally:
        sh("systemctl", "--user", "stop", "sagebox", check_rc=False)
    unit_dir = f"{CG}{cg}"
    assert wait_for(lambda: not os.path.exists(unit_dir), 10), f"{unit_dir} left after stop"
    assert not listening(8080), "port 8080 still listening after stop"
    assert not pids_with("sagebox mcp"), "a sagebox mcp process left"
    return f"served MCP over HTTP with its token (run_python: 42; status: limits by cgroup v2 in {cg}); stop left nothing"


CHECKS = [session, status_session, status_service, status_app_scope, memory_service, memory_session, fork_bomb,
          cpus_half, gone_after, sigkill, two_scopes, two_shared, unreachable, user_unit]

if __name__ == "__main__":
    want = sys.argv[1:]
    for c in CHECKS:
        if not want or c.check_name in want or c.__name__ in want:
            c()
