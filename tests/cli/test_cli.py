"""The command line through the real binary and the default (native) sandbox."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, ROOT, run, run_json


def test_factor_example_prints_the_factorization():
    p = run(["run", os.path.join(ROOT, "examples/factor.sage")])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "(x - 1) * (x + 1) * (x^2 + 1)"


def test_seed_readme_example():
    p = run(["run", os.path.join(ROOT, "examples/readme_example.sage")])
    assert p.returncode == 0, p.stderr
    # Irreducible over QQ: Sage prints the polynomial itself.
    assert p.stdout.splitlines() == ["x^6 - 2*x^5 - 13*x^4 + 8*x^3 + 32*x^2 - 8*x - 4", "181118435328"]


def test_python_from_stdin():
    p = run(["run", "--lang", "python", "-"], "print(2**100)\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "1267650600228229401496703205376\n"


def test_last_expression_is_displayed_and_semicolon_suppresses():
    p = run(["run", "--lang", "python", "-"], "x = 6\nx * 7\n")
    assert p.stdout == "42\n"
    p = run(["run", "--lang", "python", "-"], "x = 6\nx * 7;\n")
    assert p.stdout == ""
    p = run(["run", "--lang", "sage", "-"], "R.<x> = QQ[]\nfactor(x^2 - 1)\n")
    assert p.stdout == "(x - 1) * (x + 1)\n", p.stderr
    p = run(["run", "--lang", "python", "-"], "None\n")
    assert p.stdout == ""


def test_shell_and_exit_status():
    p = run(["run", "--lang", "shell", "-"], "echo out; echo err >&2; exit 3\n")
    assert p.returncode == 3
    assert p.stdout == "out\n"
    assert "err" in p.stderr


def test_language_from_extension():
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write("echo $((6*7))\n")
    try:
        p = run(["run", f.name])
        assert p.stdout == "42\n", p.stderr
    finally:
        os.unlink(f.name)


def test_python_error_shows_the_users_traceback_only():
    p = run(["run", "--lang", "python", "-"], "def f():\n    return 1/0\nf()\n")
    assert p.returncode == 1
    assert "ZeroDivisionError" in p.stderr
    assert "<cell>" in p.stderr
    assert "driver" not in p.stderr and "run_cell" not in p.stderr


def test_timeout_exit_124_and_json():
    p, r = run_json(["--lang", "python", "--timeout", "1"], "import time\nprint('started', flush=True)\ntime.sleep(30)\n")
    assert p.returncode == 124
    assert r["timed_out"] is True and r["ok"] is False
    assert "started" in r["stdout"]
    assert r["duration_ms"] < 10000


def test_json_result_has_the_seed_fields():
    p, r = run_json(["--lang", "python"], "print('hi')\n")
    for key in ["ok", "exit_code", "signal", "timed_out", "output_limit_exceeded", "stdout", "stderr",
                "truncated", "sandbox", "duration_ms"]:
        assert key in r, key
    assert r["ok"] is True and r["exit_code"] == 0 and r["stdout"] == "hi\n"
    assert set(["stdout", "stderr", "max_bytes_per_stream"]) <= set(r["truncated"])
    assert r["sandbox"]["backend"] == "native"


def test_output_over_the_cap_keeps_head_and_tail():
    code = "for i in range(5000):\n    print('line', i)\n"
    p, r = run_json(["--lang", "python", "--output-limit-kib", "16"], code)
    assert r["truncated"]["stdout"] is True
    out = r["stdout"]
    assert out.startswith("line 0\n")
    assert out.rstrip().endswith("line 4999")
    assert r["output_limit_exceeded"] is False and r["exit_code"] == 0
    assert "cut here" in out
    assert len(out.encode()) < 20 * 1024


def test_output_flood_stops_the_sandbox():
    p, r = run_json(["--lang", "python", "--output-limit-kib", "16", "--timeout", "20"],
                    "while True:\n    print('x' * 1000)\n")
    assert r["output_limit_exceeded"] is True
    assert r["timed_out"] is False
    assert r["duration_ms"] < 15000


def test_invalid_utf8_output_is_replaced():
    p, r = run_json(["--lang", "python"], "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end\\n')\n")
    assert "ok" in r["stdout"] and "end" in r["stdout"]
    assert "\ufffd" in r["stdout"]


def test_bad_settings_are_errors_with_ranges():
    for args, needle in [(["--timeout", "0"], "1-600"), (["--memory", "3g"], "256m"),
                         (["--cpus", "9"], "0.1-4"), (["--pids", "2"], "16-512"),
                         (["--output-limit-kib", "4096"], "16-2048"), (["--backend", "lxc"], "native")]:
        p = run(["run", "--lang", "python"] + args + ["-"], "print(1)\n")
        assert p.returncode == 125, (args, p.stderr)
        assert needle in p.stderr, (args, p.stderr)


def test_config_file_error_names_file_and_line():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "sagebox"))
        path = os.path.join(d, "sagebox", "config.ini")
        with open(path, "w") as f:
            f.write("[sagebox]\ntimeout = 5\nmemory = 12g\n")
        p = run(["run", "--lang", "python", "-"], "print(1)\n", env={"XDG_CONFIG_HOME": d})
        assert p.returncode == 125
        assert f"{path}:3" in p.stderr and "256m" in p.stderr


def test_precedence_file_then_env_then_flag():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "sagebox"))
        with open(os.path.join(d, "sagebox", "config.ini"), "w") as f:
            f.write("timeout = 5\n")
        env = {"XDG_CONFIG_HOME": d}
        code = "print(1)\n"
        _, r = run_json(["--lang", "python"], code, env=env)
        assert r["timeout_seconds"] == 5
        _, r = run_json(["--lang", "python"], code, env=dict(env, SAGEBOX_TIMEOUT="6"))
        assert r["timeout_seconds"] == 6
        _, r = run_json(["--lang", "python", "--timeout", "7"], code, env=dict(env, SAGEBOX_TIMEOUT="6"))
        assert r["timeout_seconds"] == 7


def test_help_and_version():
    p = run(["--help"])
    assert p.returncode == 0 and "run" in p.stdout and "self-test" in p.stdout
    p = run(["--version"])
    assert p.returncode == 0 and p.stdout.startswith("sagebox ")
    p = run(["run", "--help"])
    assert p.returncode == 0 and "--lang" in p.stdout and "124" in p.stdout
    p = run(["--help-settings"])
    assert "SAGEBOX_TIMEOUT" in p.stdout and "output_limit_kib" in p.stdout


def test_unknown_option_and_missing_file():
    p = run(["run", "--frobnicate", "-"], "")
    assert p.returncode == 125 and "unknown option" in p.stderr
    p = run(["run", "/nonexistent/file.sage"])
    assert p.returncode == 125 and "cannot read" in p.stderr
    p = run(["bogus"])
    assert p.returncode == 2


def test_status_json_says_what_is_enforced():
    p = run(["status", "--json"])
    s = json.loads(p.stdout)
    assert s["backend"]["name"] == "native"
    assert "settings" in s


def section(text, title):
    """The rows under a title line, up to the next blank line."""
    _, found, rest = text.partition("\n" + title + "\n")
    return rest.split("\n\n")[0] if found else ""


def test_status_reads_as_a_verdict():
    """One line first says whether the sandbox works here and with what,
    then what is enforced and what is not; --json is the report itself."""
    st = json.loads(run(["status", "--json"]).stdout)
    p = run(["status"])
    assert p.returncode == 0, p.stdout + p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith(f"sagebox: the sandbox works here: native backend, {st['isolation']} isolation"), first
    assert not p.stdout.lstrip().startswith("{") and "would_enforce" not in p.stdout
    enforced = section(p.stdout, "Enforced:")
    assert "seccomp filter" in enforced and f"{st['settings']['memory']} " in enforced, p.stdout
    assert f"{st['settings']['timeout']} s per call" in enforced
    if st["backend"]["would_enforce"]["cpus"]:
        assert f"by {st['backend']['would_enforce']['cpus']}" in enforced
    else:
        assert "cpus" in section(p.stdout, "Not enforced:") and "fix: " in p.stdout
    if "not enforced (below)" not in first:
        assert "\nNot enforced: nothing" in p.stdout


def test_status_of_a_broken_backend_says_why_and_the_fix():
    args = ["status", "--backend", "docker", "--podman", "/nonexistent/sagebox-test-docker"]
    p = run(args)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0] == "sagebox: the sandbox does NOT work here (docker backend).", p.stdout
    assert lines[1].startswith("  why ") and "/nonexistent/sagebox-test-docker" in lines[1]
    assert lines[2].startswith("  fix ")
    st = json.loads(run(args + ["--json"]).stdout)
    assert st["ok"] is False and st["backend"]["error"] in " ".join(l.strip() for l in lines[1:3])


def test_self_test_reads_as_a_verdict():
    p = run(["self-test"], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith("sagebox self-test: passed (native backend): Sage printed "
                            "(x - 1) * (x + 1) * (x^2 + 1), and "), first
    passed = section(p.stdout, "Passed:")
    assert "  ok    no network: " in passed and "  ok    memory limit enforced: " in passed
    assert "Failed:" not in p.stdout


def test_host_backend_warns_and_is_never_the_default():
    p = run(["run", "--backend", "host", "--lang", "python", "-"], "print(1)\n")
    assert p.returncode == 0 and p.stdout == "1\n"
    assert "NO isolation" in p.stderr
    _, r = run_json(["--lang", "python"], "print(1)\n")
    assert r["sandbox"]["backend"] != "host"


DETACHED = """import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open(%r, "w").write(str(os.getpid()))
        while True:
            pass
    os._exit(0)
time.sleep(600)
"""


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_for_pid(path, deadline=30):
    end = time.time() + deadline
    while time.time() < end:
        if os.path.exists(path) and open(path).read():
            return int(open(path).read())
        time.sleep(0.05)
    raise AssertionError("the job never started")


@pytest.mark.parametrize("isolation", ["warm", "fresh"])
def test_host_backend_job_dies_with_a_killed_sagebox(isolation):
    """A SIGKILLed sagebox cannot clean up: the host backend's keeper must
    kill the job, also a process that left its group (setsid, double fork),
    and remove the job's scratch directory in /tmp."""
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        marker = os.path.join(d, "pid")
        p = subprocess.Popen([BIN, "run", "--backend", "host", "--isolation", isolation,
                              "--lang", "python", "--timeout", "120", "-"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        p.stdin.write((DETACHED % marker).encode())
        p.stdin.close()
        pid = _wait_for_pid(marker)
        assert _alive(pid)
        # the job runs in the scratch directory (warm: a job directory in it)
        scratch = re.match(r"^/tmp/sagebox-host-[^/]+", os.readlink("/proc/%d/cwd" % pid))
        assert scratch, os.readlink("/proc/%d/cwd" % pid)
        # What the removal must not follow, and a tree it must remove.
        keep = os.path.join(d, "keep")
        open(keep, "w").write("kept\n")
        os.symlink(d, os.path.join(scratch.group(0), "out"))
        os.makedirs(os.path.join(scratch.group(0), "a", "b", "c"))
        open(os.path.join(scratch.group(0), "a", "b", "c", "f"), "w").write("x")
        p.send_signal(signal.SIGKILL)
        p.wait()
        end = time.time() + 10
        while (_alive(pid) or os.path.exists(scratch.group(0))) and time.time() < end:
            time.sleep(0.05)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            raise AssertionError("the detached job process outlived sagebox")
        assert not os.path.exists(scratch.group(0)), "the scratch directory outlived sagebox"
        assert open(keep).read() == "kept\n", "the removal followed a symlink out"


def test_host_backend_detached_process_ends_with_the_call():
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        marker = os.path.join(d, "pid")
        code = (DETACHED % marker).replace("time.sleep(600)", "print('done')")
        p = run(["run", "--backend", "host", "--isolation", "fresh", "--lang", "python", "-"], code)
        assert p.returncode == 0 and p.stdout == "done\n", p.stderr
        pid = _wait_for_pid(marker, 5)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
            raise AssertionError("a detached process outlived its call")


def test_http_beyond_loopback_needs_allow_remote_and_names_the_machine():
    # A missing --allow-remote is a usage error (2), found before any
    # sandbox starts, and says how to fix it.
    p = run(["mcp", "--http", "0.0.0.0:0"])
    assert p.returncode == 2, p.stderr
    assert "0.0.0.0 is not a loopback address" in p.stderr
    assert "--allow-remote" in p.stderr
    # With it, the banner gives clients this machine's name, not 0.0.0.0.
    with tempfile.TemporaryDirectory() as d:
        tokens = os.path.join(d, "tokens")
        with open(tokens, "w") as f:
            f.write("alice:" + "ab" * 32 + "\n")
        os.chmod(tokens, 0o600)
        proc = subprocess.Popen([BIN, "mcp", "--http", "0.0.0.0:0", "--allow-remote", "--token-file", tokens],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        try:
            lines = []
            deadline = time.time() + 60
            while time.time() < deadline:
                line = proc.stderr.readline()
                if not line:
                    break
                lines.append(line)
                if "LM Studio" in line:
                    lines.append(proc.stderr.readline())
                    break
            text = "".join(lines)
            host = os.uname().nodename
            assert "every address of this machine" in text, text
            assert '"url": "http://%s:' % host in text, text
            assert '"url": "http://0.0.0.0' not in text, text
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0


FIGURES = ("p = plot(sin(x), (x, 0, 1))\np.show()\n"
           "import matplotlib.pyplot as plt\nplt.figure(figsize=(40, 10))\nplt.plot([1, 2])\nprint('drawn')\n")


def test_figures_named_on_stderr_and_saved_with_figures_dir(tmp_path):
    from PIL import Image
    p = run(["run", "--lang", "sage", "--figures", str(tmp_path), "-"], FIGURES, timeout=180)
    assert (p.returncode, p.stdout) == (0, "drawn\n"), p.stderr
    sizes = []
    for n in (1, 2):
        img = Image.open(tmp_path / f"figure-{n}.png")
        img.load()  # decodes every pixel
        assert img.format == "PNG" and max(img.size) <= 1024
        sizes.append(img.size)
        assert f"[figure {n}: {img.size[0]}×{img.size[1]} PNG, saved as {tmp_path}/figure-{n}.png]" in p.stderr
    assert sizes[1] == (1024, 256)
    # never over an existing file; without --figures, the line and a hint
    p = run(["run", "--lang", "python", "--figures", str(tmp_path), "-"], FIGURES.split("\n", 2)[2])
    assert p.returncode == 0 and "File exists (never overwritten" in p.stderr, p.stderr
    p = run(["run", "--lang", "python", "-"], FIGURES.split("\n", 2)[2])
    assert "[figure 1: 1024×256 PNG]\n" in p.stderr and "add --figures DIR" in p.stderr
    assert run(["run", "--figures", str(tmp_path / "none"), "-"], "").returncode == 125
