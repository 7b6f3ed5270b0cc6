"""state: a session's variables saved into its workspace and loaded back
(Python's rule here; Sage's is the same with Sage's dumps/loads, tested in
a real Sage session by tests/sessions). What cannot be saved is named with
the reason; a hostile or corrupt file is reported, never raised."""
import json
import os
import pickle

from driver import state


def test_save_then_restore(tmp_path):
    pristine = {"__name__": "__main__", "keep": 1}
    glb = dict(pristine, x=[1, 2, 3], d={"a": 1.5}, f=open(os.devnull), g=lambda y: y, T=int, os=os, _p=7)
    glb["keep"] = pristine["keep"]
    r = state.save(glb, pristine, "python", str(tmp_path))
    assert r["saved"] == ["_p", "d", "x"]
    why = {e["name"]: e["why"] for e in r["not_saved"]}
    assert set(why) == {"f", "g", "T"}
    assert "pickle" in why["f"].lower() and "class or type" in why["T"]
    glb["f"].close()
    fresh = {"__name__": "__main__"}
    back = state.restore(fresh, "python", str(tmp_path))
    assert back["restored"] == ["_p", "d", "x"] and not back["failed"]
    assert fresh["x"] == [1, 2, 3] and fresh["d"] == {"a": 1.5}
    assert {e["name"] for e in back["not_saved"]} == {"f", "g", "T"}


def test_no_state_is_an_error_in_the_report(tmp_path):
    r = state.restore({}, "python", str(tmp_path))
    assert "no saved state" in r["error"] and r["restored"] == []


def test_a_corrupt_file_is_reported(tmp_path):
    (tmp_path / ".sagebox").mkdir()
    (tmp_path / ".sagebox" / "session.pickle").write_bytes(b"\x80\x04not a pickle")
    r = state.restore({}, "python", str(tmp_path))
    assert "cannot be read" in r["error"]


def test_one_bad_value_does_not_spoil_the_rest(tmp_path):
    (tmp_path / ".sagebox").mkdir()
    good = pickle.dumps(41)
    blob = {"v": 1, "lang": "python", "codec": "pickle",
            "values": {"a": good, "b": b"\x80\x04garbage", "not a name": good}, "not_saved": {}}
    (tmp_path / ".sagebox" / "session.pickle").write_bytes(pickle.dumps(blob))
    glb = {}
    r = state.restore(glb, "python", str(tmp_path))
    assert r["restored"] == ["a"] and glb == {"a": 41}
    assert {e["name"] for e in r["failed"]} == {"b", "not a name"}


def test_run_writes_the_report_for_the_controller(tmp_path):
    rp = tmp_path / "report.json"
    assert state.run("save", {"x": 1}, {}, "python", str(tmp_path / "ws"), str(rp)) == 0
    assert json.loads(rp.read_text())["saved"] == ["x"]
    assert state.run("restore", {}, {}, "python", str(tmp_path / "nows"), str(rp)) == 1
    assert "no saved state" in state.read_report(str(rp))["error"]
    rp.write_text("[1, 2]")
    assert "error" in state.read_report(str(rp))
