"""A session's variables saved into its workspace, and loaded back by a
later session (session_save, session_open with restore). Runs in the
interpreter, the process that holds the variables, inside the sandbox: a
saved file is code's own data, and loading one (unpickling) can only do
what the session's code could do anyway.

What is saved follows Sage's own save_session(): each variable the session
made (not one it had at its start, unless rebound; no module, no class or
type), whose value pickles and unpickles again ("pickled *and* unpickled,
to make certain"); Sage values through Sage's dumps/loads, Python ones
through pickle. What is not saved is named with the reason (an open file, a
lambda, a C object without pickle support). Each value is pickled on its
own, so one that will not load does not spoil the others.

The file is WORKSPACE/.sagebox/session.pickle, one pickle of
{v, lang, codec, values: {name: bytes}, not_saved: {name: why}}, written
beside and renamed into place."""
import json
import os
import pickle
import types

STATE_DIR = ".sagebox"
STATE_NAME = "session.pickle"
# Names a session has whatever its code did (Sage's save_session skips them).
NEVER = {"In", "Out", "exit", "quit", "__builtins__", "get_ipython"}
WHY_MAX = 300      # characters of one reason
NAMES_MAX = 500    # names one report lists


def _codec(codec):
    if codec == "sage":
        from sage.misc.persist import dumps, loads
        return dumps, loads
    return (lambda v: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL)), pickle.loads


def _why(e):
    return ("%s: %s" % (type(e).__name__, e))[:WHY_MAX]


def new_names(glb, pristine):
    """The session's own variables, sorted."""
    out = []
    for k, v in glb.items():
        if k in NEVER or k.startswith("__") or k.startswith("_sb") or k.startswith("_sage_const_"):
            continue  # (the preparser makes its constants again in every cell that uses them)
        if isinstance(v, types.ModuleType):
            continue
        if pristine is not None and k in pristine and pristine[k] is v:
            continue
        out.append(k)
    return sorted(out)


def save(glb, pristine, lang, workspace):
    """Save; the report {file, saved, not_saved: [{name, why}], bytes}."""
    codec = "sage" if lang == "sage" else "pickle"
    dumps, loads = _codec(codec)
    values, not_saved = {}, {}
    for k in new_names(glb, pristine):
        v = glb[k]
        try:
            if isinstance(v, type):
                raise TypeError("%s is a class or type" % (v,))
            b = dumps(v)
            loads(b)
            values[k] = b
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            not_saved[k] = _why(e)
    blob = pickle.dumps({"v": 1, "lang": lang, "codec": codec, "values": values, "not_saved": not_saved},
                        protocol=pickle.HIGHEST_PROTOCOL)
    d = os.path.join(workspace, STATE_DIR)
    os.makedirs(d, 0o755, exist_ok=True)
    path = os.path.join(d, STATE_NAME)
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return {"file": path, "saved": sorted(values)[:NAMES_MAX], "saved_count": len(values),
            "not_saved": [{"name": k, "why": w} for k, w in sorted(not_saved.items())][:NAMES_MAX],
            "bytes": len(blob), "lang": lang}


def restore(glb, lang, workspace):
    """Load into glb; the report {file, restored, failed: [{name, why}],
    not_saved (as the save said), saved_lang, error}."""
    path = os.path.join(workspace, STATE_DIR, STATE_NAME)
    report = {"file": path, "restored": [], "failed": [], "not_saved": []}
    try:
        with open(path, "rb") as f:
            saved = pickle.load(f)
    except FileNotFoundError:
        report["error"] = "no saved state in this workspace (session_save makes one)"
        return report
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        report["error"] = "the saved state cannot be read: %s" % _why(e)
        return report
    if not isinstance(saved, dict) or not isinstance(saved.get("values"), dict):
        report["error"] = "the saved state is not one sagebox wrote"
        return report
    report["saved_lang"] = str(saved.get("lang"))
    ns = saved.get("not_saved")
    if isinstance(ns, dict):
        report["not_saved"] = [{"name": str(k), "why": str(w)[:WHY_MAX]} for k, w in sorted(ns.items())][:NAMES_MAX]
    try:
        _, loads = _codec(saved.get("codec"))
    except ImportError:
        report["error"] = "the state was saved by a sage session: open a sage session to restore it"
        return report
    restored, failed = [], []
    for k, b in sorted(saved["values"].items()):
        if not isinstance(k, str) or not k.isidentifier() or not isinstance(b, bytes):
            failed.append({"name": str(k)[:100], "why": "not a variable name and its value"})
            continue
        try:
            glb[k] = loads(b)
            restored.append(k)
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            failed.append({"name": k, "why": _why(e)})
    report["restored"] = restored[:NAMES_MAX]
    report["restored_count"] = len(restored)
    report["failed"] = failed[:NAMES_MAX]
    return report


def read_report(path, limit=1 << 20):
    """The interpreter's report, as the controller reads it: the session's
    code could have written that file too, so it is only data to pass on
    (bounded, JSON, an object)."""
    try:
        with open(path, "rb") as f:
            r = json.loads(f.read(limit).decode("utf-8", "replace"))
        return r if isinstance(r, dict) else {"error": "the report is not an object"}
    except (OSError, ValueError) as e:
        return {"error": "no report: %s" % e}


def run(op, glb, pristine, lang, workspace, report_path):
    """save or restore, its report written to report_path (for the
    controller); the status the call ends with."""
    try:
        report = save(glb, pristine, lang, workspace) if op == "save" else restore(glb, lang, workspace)
        status = 0 if not report.get("error") else 1
    except KeyboardInterrupt:
        report, status = {"error": "interrupted: it took longer than the call's time limit"}, 1
    except BaseException as e:
        report, status = {"error": _why(e)}, 1
    try:
        with open(report_path, "w") as f:
            json.dump(report, f)
    except OSError:
        status = 1
    return status
