"""`sagebox status` says what the native sandbox would enforce here."""
import json
import subprocess

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
