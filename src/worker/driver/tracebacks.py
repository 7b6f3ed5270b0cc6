"""A traceback as the user should see it: only the frames of their own
code. The driver's frames above the cell are skipped, and so are those of
a magic that ran it (%time): magics.py names its file here when it loads,
so this module depends on nothing that runs code (cell.py, interact.py and
child.py all print through it)."""
import sys

from .magic_args import UsageError
from .source import CELL

# Files whose frames are the driver's own, not the user's.
_hidden = set()


def hide_frames_of(filename):
    _hidden.add(filename)


def print_user_traceback():
    import traceback
    etype, value, tb = sys.exc_info()
    if isinstance(value, UsageError):
        sys.stderr.write("UsageError: %s\n" % value)  # one line, as IPython says it
        return
    # Skip the driver's own frames: show the user only their code (a
    # session names each call's cell "<cell N>").
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(CELL[:-1]):
        tb = tb.tb_next
    te = traceback.TracebackException(etype, value, tb)
    if any(f.filename in _hidden for f in te.stack):
        te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename not in _hidden])
    sys.stderr.write("".join(te.format()))
