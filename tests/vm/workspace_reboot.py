"""A named workspace across a reboot of the machine, as the guest's normal
user: `before` opens a workspace session from a `sagebox mcp` that stays
running (as a desktop host's child does), writes files and variables, and
leaves the session open; the guest then reboots the way a user does
(`systemctl reboot`: every process gets SIGTERM, then the disks are synced).
`after`, on the next boot, opens the same workspace with restore and finds
every file and the saved variables, with no sync left half done.

    python3 workspace_reboot.py before|after
"""
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from mcpclient import MCP  # noqa: E402
from vmlib import SAGEBOX, check  # noqa: E402
from wshost import ok, out, text  # noqa: E402

NAME = "survives-reboot"
LANG = "sage" if os.path.exists("/usr/bin/sage") else "python"
STORE = os.path.join(os.path.expanduser("~"), ".local", "share", "sagebox", "workspaces", "local", NAME)
EXPECT = os.path.join(os.path.expanduser("~"), "workspace-reboot.json")
STATE = """
import os, hashlib
n = 42
d = {'primes': [2, 3, 5], 'name': 'chapter'}
os.makedirs('/work/chapter1', exist_ok=True)
open('/work/chapter1/notes.txt', 'w').write('written before the reboot\\n')
open('/work/data.bin', 'wb').write(os.urandom(4 << 20))
print(hashlib.sha256(open('/work/data.bin', 'rb').read()).hexdigest())
"""


def open_ws(m, restore=False):
    args = {"lang": LANG, "workspace": NAME}
    if restore:
        args["restore"] = True
    r = ok(m, "session_open", args)
    return r["structuredContent"]["session_id"], r


@check("workspace before a reboot: a session writes files and variables and stays open")
def before():
    m = MCP(SAGEBOX)
    sid, _ = open_ws(m)
    digest = out(m, sid, STATE, LANG).strip()
    assert len(digest) == 64, digest
    ok(m, "session_save", {"session_id": sid})
    # written after the save, by the last call but one: a call's files are
    # on disk by the time the next call ends
    # and a variable set after the save: the clean stop at the reboot saves it
    assert out(m, sid, "late = 'kept by the clean stop'\nopen('/work/after-save.txt', 'w').write('x' * 1000)\n"
                       "print('w')", LANG).strip() == "w"
    assert out(m, sid, "print('last')", LANG).strip() == "last"
    with open(EXPECT, "w") as f:
        json.dump({"sha256": digest, "lang": LANG}, f)
    # The server and its open session live on past this script: a child
    # keeps the server's pipes open until the reboot's SIGTERM.
    if os.fork() == 0:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        while True:
            time.sleep(3600)
    return f"{LANG} session {sid[:12]}… open on workspace {NAME}, 4 MiB + 2 files written, variables saved"


@check("workspace after a reboot: files and saved variables are back, no sync half done")
def after():
    want = json.load(open(EXPECT))
    assert os.path.isdir(os.path.join(STORE, "files")), f"no store at {STORE}"
    m = MCP(SAGEBOX)
    try:
        sid, r = open_ws(m, restore=True)
        assert not os.path.exists(os.path.join(STORE, "stage")), "a stage outlived the open"
        assert "Restored" in text(r), text(r)
        got = out(m, sid, "import hashlib\nprint(n, d['primes'], late, open('chapter1/notes.txt').read().strip(), "
                          "len(open('after-save.txt').read()), "
                          "hashlib.sha256(open('data.bin', 'rb').read()).hexdigest())", LANG).strip()
        assert got == f"42 [2, 3, 5] kept by the clean stop written before the reboot 1000 {want['sha256']}", got
        ok(m, "session_close", {"session_id": sid})
        listed = [w for w in ok(m, "workspace_list", {})["structuredContent"]["workspaces"] if w["name"] == NAME]
        assert listed and not listed[0].get("open"), listed
    finally:
        m.close()
    return f"{LANG}: n, d, chapter1/notes.txt, after-save.txt and data.bin (sha256 {want['sha256'][:12]}…) as written"


if __name__ == "__main__":
    phase = sys.argv[1] if len(sys.argv) > 1 else ""
    if phase not in ("before", "after"):
        sys.exit("usage: workspace_reboot.py before|after")
    sys.exit(0 if {"before": before, "after": after}[phase]() else 1)
