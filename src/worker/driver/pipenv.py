"""pip in a sandbox with network: when the user's `network`
list is set, `pip install NAME` (and `python3 -m pip`, `sage -pip`, !pip,
%pip) installs into the workspace's .local: a session's /work/.local, gone
with the session; a stateless call's throwaway work dir, gone with the call.

setup() (the driver, before any code runs) gives every process of the
sandbox pip's settings as variables: a user install (PIP_USER) under
PYTHONUSERBASE=WORKSPACE/.local, PEP 668's refusal lifted for it (the
system's Python stays untouched: its directories are read-only here and a
user install never writes there), the cache under /tmp, no prompt, no
progress bar, no version check, two tries, the user site on for the `python3` the code
starts, and WORKSPACE/.local/bin on PATH. Nothing is written outside the
workspace but pip's cache in the sandbox's own /tmp.

The driver's interpreters run with -I (no user site): refresh() puts the
user site on their sys.path once pip made it, where Python's site would
(before the system's site directories, so that `pip install -U` wins as pip
says), runs its .pth files, and forgets the import system's caches, so
what pip installed imports at once, in the call that installed it or the
next. Without network nothing is set and refresh() does nothing."""
import os
import sys

SITE = None        # WORKSPACE/.local/lib/pythonX.Y/site-packages; None: no network
SKIP = ()          # (".local",) with network: what written.py does not list
_seen = None       # its mtime when refresh() last looked
_pth = set()       # its .pth files already run


def setup(workspace):
    """pip's variables for every process of this sandbox, when the user's
    network list is set (the host gave the proxy's variables)."""
    global SITE, SKIP
    if not os.environ.get("HTTP_PROXY"):
        return
    import sysconfig
    base = os.path.join(workspace, ".local")
    SITE = sysconfig.get_path("purelib", "posix_user", vars={"userbase": base})
    SKIP = (".local",)
    tmp = os.environ.get("TMPDIR") or "/tmp"
    os.environ.update({
        "PYTHONUSERBASE": base,
        "PIP_USER": "1",
        # PEP 668 guards the system's Python against pip; a user install
        # here writes under the workspace only (the system's directories
        # are read-only in the sandbox anyway).
        "PIP_BREAK_SYSTEM_PACKAGES": "1",
        "PIP_CACHE_DIR": os.path.join(tmp, "pip-cache"),
        "PIP_NO_INPUT": "1",
        "PIP_PROGRESS_BAR": "off",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        # A host the list refuses gets 403 every time: two tries, not
        # pip's five with 8 s of back-off (a flaky index still gets one more).
        "PIP_RETRIES": "2",
        "PIP_ROOT_USER_ACTION": "ignore",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin") + ":" + os.path.join(base, "bin"),
    })
    # The `python3` the code starts sees what pip installed (the driver's
    # own interpreters run with -I and use refresh()).
    os.environ.pop("PYTHONNOUSERSITE", None)


def enabled():
    return SITE is not None


def refresh():
    """The user site on sys.path once it exists, its new .pth files run,
    the import caches forgotten when it changed. One stat when nothing
    changed; nothing at all without network."""
    global _seen
    if SITE is None:
        return
    try:
        mtime = os.stat(SITE).st_mtime_ns
    except OSError:
        return
    if mtime == _seen and SITE in sys.path:
        return
    _seen = mtime
    import importlib
    import site
    if SITE not in sys.path:
        at = next((i for i, p in enumerate(sys.path)
                   if os.path.basename(p) in ("site-packages", "dist-packages")), len(sys.path))
        sys.path.insert(at, SITE)
    known = {os.path.abspath(p) for p in sys.path}
    try:
        names = sorted(n for n in os.listdir(SITE) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        names = []
    for n in names:
        if n not in _pth:
            _pth.add(n)
            site.addpackage(SITE, n, known)
    importlib.invalidate_caches()
