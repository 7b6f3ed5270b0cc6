"""`sagebox run`, done through a session instead (the break-out
tests of tests/sandbox must also pass inside a session). With
SAGEBOX_TEST_VIA=session, tests/sandbox/conftest.py's run() comes from
here: each run opens a fresh session of the code's language on a
`sagebox mcp` server (one per distinct set of settings and environment,
kept for the whole pytest run), runs the code in it with the run tool and
session_id, and closes the session, so that nothing of one test reaches
the next and everything the code started dies with its session. The
result looks like `sagebox run`'s: exit status (124 timed out, 125 sandbox
error, 128+N killed by signal N), stdout, stderr, or with --json the
result object.

With SAGEBOX_TEST_VIA=workspace each of those sessions is opened on a named
workspace of its own (kept on disk in a temporary data directory, restored
at its open, saved and synced at its close): the break-out tests must pass
with a workspace open too."""
import atexit
import itertools
import json
import os
import shutil
import tempfile

from mcpclient import MCP, TOOLS

_servers = {}
WORKSPACE = os.environ.get("SAGEBOX_TEST_VIA") == "workspace"
_data = tempfile.mkdtemp(prefix="sagebox-battery-data-") if WORKSPACE else None
_names = itertools.count()


def _server(binary, flags, env):
    key = (binary, tuple(flags), tuple(sorted((env or {}).items())))
    if key not in _servers:
        e = {k: v for k, v in os.environ.items() if not k.startswith("SAGEBOX_") or k == "SAGEBOX_BIN"}
        if _data:
            e["XDG_DATA_HOME"] = _data
        e.update(env or {})
        _servers[key] = MCP(binary, flags, env=e)
    return _servers[key]


@atexit.register
def _close_all():
    for m in _servers.values():
        m.close()
    if _data:
        shutil.rmtree(_data, ignore_errors=True)


def exit_status(res):
    """What `sagebox run` exits with for this result object."""
    if res.get("error"):
        return 125
    if res.get("timed_out"):
        return 124
    sig = res.get("signal")
    if sig:
        import signal as signals
        try:
            return 128 + int(getattr(signals, sig))
        except (AttributeError, TypeError, ValueError):
            return 128
    code = res.get("exit_code")
    return code if isinstance(code, int) and code >= 0 else 125


def run(binary, code, lang, args, timeout, env, backend):
    """(returncode, stdout, stderr) as `sagebox run --backend B --lang L
    ARGS -` would give them, through a fresh session."""
    flags, call_args, as_json = ["--backend", backend], {}, False
    it = iter(args)
    for a in it:
        if a == "--json":
            as_json = True
        elif a == "--timeout":
            call_args["timeout_seconds"] = int(next(it))
        elif a.startswith("--"):
            flags += [a, next(it)]
        else:
            raise ValueError("sessionrun: unsupported argument %r" % a)
    m = _server(binary, flags, env)
    sess_lang = "sage" if lang == "sage" else lang
    how = {"lang": sess_lang}
    if WORKSPACE:
        how["workspace"] = "battery-%d" % next(_names)
    opened = m.call("session_open", how, timeout)
    if opened.get("isError"):
        return 125, "", opened["content"][0]["text"] + "\n"
    sid = opened["structuredContent"]["session_id"]
    try:
        r = m.call(TOOLS[lang], dict(call_args, code=code, session_id=sid), timeout)
    finally:
        m.call("session_close", {"session_id": sid}, timeout)
    res = r.get("structuredContent") or {}
    if as_json:
        return exit_status(res), json.dumps(res) + "\n", ""
    err = res.get("stderr", "")
    if res.get("error"):
        err += "sagebox: %s\n" % res["error"]
    return exit_status(res), res.get("stdout", ""), err

