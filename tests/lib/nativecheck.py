"""The session-wide check of the suites that need the native sandbox: the
binary exists (else stop, naming SAGEBOX_BIN), and the native backend is
usable here (else skip, with the backend's own reason)."""
import json
import os
import subprocess

import pytest


def require_native(binary, env):
    if not os.access(binary, os.X_OK):
        pytest.exit(f"sagebox binary not found at {binary} (set SAGEBOX_BIN)", returncode=2)
    st = subprocess.run([binary, "status", "--json", "--backend", "native"], capture_output=True, text=True,
                        timeout=60, env=env)
    try:
        b = json.loads(st.stdout).get("backend", {})
    except json.JSONDecodeError:
        b = {}
    if b.get("available") is False:
        pytest.skip(f"native sandbox unavailable here: {b.get('error')}", allow_module_level=True)
