"""The unprivileged user the benchmark runs sagebox as (bench/run's
native-user rows, bench/hops): found or created, a prefix that switches to
it, and a copy of the binary it can execute."""
import atexit
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

BENCH_USER = "sagebox-bench"


def as_user_prefix(pw):
    """argv that runs the rest as the user pw, with a clean environment
    (KEY=VALUE words may follow it: they are `env` arguments)."""
    run = f"/run/user/{pw.pw_uid}"
    return (["runuser", "-u", pw.pw_name, "--", "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin",
             f"HOME={pw.pw_dir}", f"USER={pw.pw_name}", "LANG=C.UTF-8"]
            + ([f"XDG_RUNTIME_DIR={run}"] if os.path.isdir(run) else []))


def bench_user(name, create):
    """The unprivileged user `name`, created (a system user with a home, no
    login shell) when it is the benchmark's own and missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        if not create:
            raise SystemExit(f"bench: --user {name}: no such user; create it or omit --user "
                             f"(the benchmark then creates {BENCH_USER})")
    subprocess.run(["useradd", "--system", "--create-home", "--home-dir", f"/var/lib/{name}",
                    "--shell", "/usr/sbin/nologin", name], check=True)
    print(f"created the unprivileged bench user {name}", file=sys.stderr, flush=True)
    return pwd.getpwnam(name)


def user_binary(binary):
    """A copy of binary that any user can execute (the build tree may not
    be theirs to read), removed when the benchmark exits."""
    d = tempfile.mkdtemp(prefix="sagebox-bench-")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    os.chmod(d, 0o755)
    out = os.path.join(d, "sagebox")
    shutil.copy2(binary, out)
    os.chmod(out, 0o755)
    return out
