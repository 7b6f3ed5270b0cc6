"""Sage 9's exit handler for its temporary directory, skipped in a job that
never made the directory.

Sage 9.x (sage/misc/temporary_file.py) registers delete_tmpfiles at exit:
shutil.rmtree(str(SAGE_TMP)). SAGE_TMP is a lazy string evaluated anew at
every use: DOT_SAGE/temp/HOSTNAME/<pid>, made (os.makedirs) by the very
evaluation. So a warm job's child, which has a pid of its own and most
often never touched SAGE_TMP, made its directory at exit only to remove
it, before the job's output closes and its answer can go: the makedirs,
the rmtree and their copy-on-write faults took ~0.7 ms in a fresh fork of
a plain Sage process, and the warm jobs' exit went from ~0.55 to ~0.38 ms
without them (docs/WARM.md).

The warm worker checks once (check) that its Sage computes SAGE_TMP that
way; a job's child then drops the handler at its exit (skip_unmade) when
that directory does not exist: there is nothing for it to remove. When it
exists (the job used tmp_dir(), tmp_filename(), an interface's files),
the handler runs as Sage registered it, in the same order. A Sage without
these names, or whose SAGE_TMP is elsewhere, is left alone."""
import atexit
import os
import sys

_handler = None  # Sage's delete_tmpfiles, once check() found its layout


def _path(misc):
    return os.path.join(misc.DOT_SAGE, "temp", misc.HOSTNAME, str(os.getpid()))


def check():
    """In the warm worker, after Sage's import: whether SAGE_TMP is where
    _path puts it (evaluating it makes the worker's own directory, which
    Maxima's ECL_TMP makes anyway). None when the shortcut is on, else why
    not."""
    global _handler
    tf = sys.modules.get("sage.misc.temporary_file")
    misc = sys.modules.get("sage.misc.misc")
    handler = getattr(tf, "delete_tmpfiles", None)
    lazy = getattr(misc, "SAGE_TMP", None)
    if handler is None or lazy is None or not all(hasattr(misc, a) for a in ("DOT_SAGE", "HOSTNAME")):
        return "not Sage 9's SAGE_TMP"
    try:
        if str(lazy) != _path(misc):
            return "SAGE_TMP is not DOT_SAGE/temp/HOSTNAME/PID"
    except Exception as e:
        return "SAGE_TMP: %s" % type(e).__name__
    _handler = handler
    return None


def skip_unmade():
    """In a job's child, just before its exit handlers run."""
    if _handler is None:
        return
    try:
        made = os.path.lexists(_path(sys.modules["sage.misc.misc"]))
    except Exception:
        return  # (a job replaced Sage's modules: the handler runs as registered)
    if not made:
        atexit.unregister(_handler)
