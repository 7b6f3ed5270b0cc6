"""The driver as built: one string on argv, under the kernel's limit for
one argument, that runs the same modules the other tests import. Jobs run
through its `fresh` mode (fresh isolation's one-job worker): the run frame
goes in before the worker is ready, as the host sends it."""
import os
import subprocess
import sys
from collections import namedtuple

import pytest

from conftest import BUNDLE, WORKER

sys.path.insert(0, WORKER)
from driver import channel  # noqa: E402

MAX_ARG_STRLEN = 32 * 4096    # include/uapi/linux/binfmts.h, with the NUL
PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


@pytest.fixture(scope="module")
def bundle():
    if not os.path.exists(BUNDLE):
        pytest.skip(f"no built bundle at {BUNDLE} (build first, or set SAGEBOX_DRIVER_BUNDLE)")
    return open(BUNDLE, encoding="utf-8").read()


Done = namedtuple("Done", "returncode stdout stderr frames")


def once(bundle, lang, code, cwd=None, env=None):
    """One job in `fresh` mode: the frames it answers, decoded. env: added
    to this process's environment."""
    code = code.encode()
    run = channel.encode({"type": "run", "id": 1, "lang": lang, "timeout_ms": 60000, "max_output": 1 << 20,
                          "limits": {}, "code_bytes": len(code)}) + code
    kind = "sage" if lang == "sage" else "python"
    p = subprocess.run([PY, "-I", "-c", bundle, "fresh", kind, "/bin/sh", "0"], input=run, capture_output=True,
                       timeout=120, cwd=cwd, env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stderr
    frames, data = [], p.stdout
    while data:
        n = int.from_bytes(data[:4], "big")
        frames.append(channel.decode_body(data[4:4 + n]))
        data = data[4 + n:]
    assert [h["type"] for h, _ in frames[:2]] == ["ready", "started"], frames
    done = frames[-1][0]
    assert done["type"] == "done", frames

    def stream(name):
        return b"".join(b for h, b in frames if h["type"] == "out" and h["stream"] == name).decode()
    return Done(done["exit_code"], stream("stdout"), stream("stderr"), frames)


def test_fits_in_one_argv_string(bundle):
    assert len(bundle.encode()) < MAX_ARG_STRLEN
    # and the build refuses one that would not
    big = os.path.join(os.path.dirname(BUNDLE), "too-big.py")
    try:
        open(big, "w").write("#" * MAX_ARG_STRLEN)
        p = subprocess.run([PY, os.path.join(WORKER, "embed.py"), "--max-bytes", str(MAX_ARG_STRLEN - 1), big,
                            big + ".c", "sym"], capture_output=True, text=True)
        assert p.returncode != 0 and "MAX_ARG_STRLEN" in p.stderr and not os.path.exists(big + ".c")
    finally:
        for p in (big, big + ".c"):
            if os.path.exists(p):
                os.remove(p)


def test_python_cell_through_the_bundle(bundle):
    p = once(bundle, "python", "import sys\nprint(sys.argv)\nx = 6\nx * 7\n")
    assert (p.returncode, p.stdout, p.stderr) == (0, "['<cell>']\n42\n", "")


def test_argparse_script_works(bundle):
    p = once(bundle, "python", "import argparse\nap = argparse.ArgumentParser()\nap.add_argument('-v', action='store_true')\n"
                               "print(ap.parse_args())\n")
    assert (p.returncode, p.stdout) == (0, "Namespace(v=False)\n"), p.stderr


def test_shell_dollar_zero_names_the_script(bundle, tmp_path):
    p = once(bundle, "shell", 'echo "$0" "$#"\n', cwd=tmp_path)
    assert (p.returncode, p.stdout) == (0, f"{tmp_path}/.sagebox-script.sh 0\n")


def test_fresh_mode_exits_after_its_job_and_leaves_nothing(bundle, tmp_path):
    p = once(bundle, "python", "open('left', 'w').write('x')\nprint('ran')\n", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (0, "ran\n")
    # the job ran in the backend's own directory (the host backend removes it)
    assert os.listdir(tmp_path) == ["left"]


def test_usage_error(bundle):
    p = subprocess.run([PY, "-I", "-c", bundle, "bogus"], capture_output=True, text=True)
    assert p.returncode == 125 and "usage" in p.stderr


def test_importing_main_runs_nothing():
    p = subprocess.run([PY, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import driver.main, driver.zygote, "
                        "driver.janitor; print('imported')", WORKER], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "imported\n", "")


# -- the driver's precompiled code (bundle.py's loader, src/runner/warm/driver_code.c)

def code_cache(bundle, tmp_path):
    """The file `code-cache DIR NAME` makes: its path."""
    p = subprocess.run([PY, "-I", "-c", bundle, "code-cache", str(tmp_path), "driver-x.code"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return tmp_path / "driver-x.code"


def head_of(bundle):
    import importlib.util
    import re
    blob_id = re.search(r'b"sagebox-driver-code ([0-9a-f]{32}) "', bundle).group(1)
    return b"sagebox-driver-code %s %s\n" % (blob_id.encode(), importlib.util.MAGIC_NUMBER.hex().encode())


def ready_of(p):
    return p.frames[0][0]


def test_code_cache_is_made_whole_and_taken(bundle, tmp_path):
    f = code_cache(bundle, tmp_path)
    data = f.read_bytes()
    assert data.startswith(head_of(bundle))
    assert os.stat(f).st_mode & 0o777 == 0o644          # the sandbox user reads it
    assert sorted(os.listdir(tmp_path)) == ["driver-x.code"]  # no temporary file left
    code = "import os\nprint(os.environ.get('SAGEBOX_DRIVER_CODE'))\n6 * 7\n"
    p = once(bundle, "python", code, env={"SAGEBOX_DRIVER_CODE": str(f)})
    assert ready_of(p)["driver_code"] == "precompiled"
    # the job runs as before and never sees the variable
    assert (p.returncode, p.stdout, p.stderr) == (0, "None\n42\n", "")
    p = once(bundle, "python", "6 * 7\n")
    assert ready_of(p)["driver_code"] == "compiled" and p.stdout == "42\n"


def test_the_code_in_the_file_is_what_runs(bundle, tmp_path):
    import marshal
    f = code_cache(bundle, tmp_path)
    head = head_of(bundle)
    code = marshal.loads(f.read_bytes()[len(head):])
    src = open(os.path.join(WORKER, "driver", "__init__.py")).read()
    assert 'return "precompiled" if' in src
    code["__init__"] = compile(src.replace('return "precompiled" if', 'return "from the file" if'), "x", "exec")
    f.write_bytes(head + marshal.dumps(code))
    p = once(bundle, "python", "6 * 7\n", env={"SAGEBOX_DRIVER_CODE": str(f)})
    assert ready_of(p)["driver_code"] == "from the file" and p.stdout == "42\n"


def test_a_file_not_made_for_this_driver_and_python_is_ignored(bundle, tmp_path):
    import marshal
    good = code_cache(bundle, tmp_path).read_bytes()
    head = head_of(bundle)
    other_blob = head.replace(head.split()[1], b"0" * 32)
    other_python = head[:-9] + b"00000000\n"
    bad = {
        "another driver": other_blob + good[len(head):],
        "another Python's bytecode": other_python + good[len(head):],
        "cut short": good[:len(head) + 1000],
        "not a dict": head + marshal.dumps(["print('no')"]),
        # source text where code objects belong would be run by exec
        "text, not code": head + marshal.dumps({"__init__": "raise SystemExit(9)"}),
        "empty": b"",
        "missing": None,
    }
    for what, data in bad.items():
        f = tmp_path / "bad.code"
        if data is None:
            f.unlink(missing_ok=True)
        else:
            f.write_bytes(data)
        p = once(bundle, "python", "6 * 7\n", env={"SAGEBOX_DRIVER_CODE": str(f)})
        assert (ready_of(p)["driver_code"], p.stdout) == ("compiled", "42\n"), what
