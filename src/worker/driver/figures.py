"""Figures a job displays, inside the sandbox: Sage's show(p), p.show(), a
Graphics (or any object with a graphical rich output) as the cell's last
expression, matplotlib's plt.show() and fig.show(), a matplotlib Figure as
the last expression, and figures still open when the cell ends.

Each becomes a PNG at most max_side pixels on its long side, shrunk to the
caps of the figure class, and goes out as an item of kind "png" on the
job's display pipe (items.py); a session saves each in its workspace as
figure-N.png too, and the record says N. hooks.py installs patch_pyplot
(pyplot.show, Figure.show) and Sage's display manager's backend
(display.py, which sends a PNG through png() here)."""
import os
import struct
import sys

from . import items
from .channel import write_all

# Figures smaller than this are not worth shrinking into the rest of the
# total: the driver says "over the total" instead.
MIN_BUDGET = 8 << 10
# Tries at shrinking a PNG that is over its byte budget.
SHRINK_TRIES = 5
# Sage's defaults (sage.plot.graphics): figsize 6.4 x 4.8 inches, 100 dpi.
SAGE_FIGSIZE = 6.4
SAGE_DPI = 100

_saved = None  # a session's last figure-N.png number; None: not looked yet


def png(data):
    """Send one figure, scaled and shrunk to the caps of its class, or say
    why not."""
    out = items.current()
    room = out.room("png") if out is not None else None
    if room is None:
        return
    fits, left, one = room
    if not fits:
        out.skip("png", b"c")
        return
    if left < MIN_BUDGET:
        out.skip("png", b"t")
        return
    budget = min(one, left)
    try:
        data = fit(data, out.max_side, budget)
    except Exception:
        _failed("scaling it")
        return
    if data is None:
        out.skip("png", b"t" if left < one else b"i")
        return
    n = _save(out.save_dir, data) if out.save_dir else None
    out.send("png", struct.pack(">I", n or 0) + data, len(data))


def _save(dirname, data):
    """A session keeps each figure in its workspace as figure-N.png, N one
    more than the highest there (never over a file: O_EXCL, no symlink
    followed). The number, or None when it cannot be saved (the workspace
    is full): the figure is still shown."""
    global _saved
    import re
    if _saved is None:
        try:
            names = os.listdir(dirname)
        except OSError:
            names = []
        nums = [int(m.group(1)) for m in map(re.compile(r"figure-([0-9]{1,9})\.png$").match, names) if m]
        _saved = max(nums, default=0)
    for _ in range(100):
        _saved += 1
        path = os.path.join(dirname, "figure-%d.png" % _saved)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
        except OSError:
            return None
        try:
            write_all(fd, data)
            return _saved
        except OSError:
            os.unlink(path)
            return None
        finally:
            os.close(fd)
    return None


def png_size(data):
    """(width, height) from a PNG's IHDR, or None."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def fit(data, max_side, budget):
    """data as a PNG at most max_side pixels on its long side and budget
    bytes, scaled down with Pillow when it is not; None when it cannot be
    made to fit."""
    size = png_size(data)
    if size and max(size) <= max_side and len(data) <= budget:
        return data
    import io
    from PIL import Image
    img = Image.open(io.BytesIO(data))
    img.load()
    w, h = img.size
    scale = min(1.0, max_side / max(w, h))
    for _ in range(SHRINK_TRIES):
        size = (max(1, int(w * scale)), max(1, int(h * scale)))
        out = io.BytesIO()
        (img.resize(size, Image.LANCZOS) if size != (w, h) else img).save(out, format="PNG", optimize=True)
        if len(out.getvalue()) <= budget:
            return out.getvalue()
        scale *= (budget / len(out.getvalue())) ** 0.5 * 0.9
    return None


def _failed(what):
    import traceback
    sys.stderr.write("sagebox: a figure could not be drawn (%s):\n" % what)
    traceback.print_exc()


def mpl_figure(fig):
    """Send a matplotlib Figure, drawn at a resolution that keeps its long
    side within the cap (a huge figsize is not drawn huge first)."""
    out = items.current()
    if out is None:
        return
    import io
    w, h = fig.get_size_inches()
    dpi = min(fig.dpi, out.max_side / max(w, h, 1e-3))
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
        png(buf.getvalue())
    except Exception:
        _failed("matplotlib")


def flush_open():
    """Send every figure pyplot still has open, in the order of their
    numbers, and close them (the cell is over, or plt.show() was called)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if items.current() is None or plt is None:
        return
    from matplotlib._pylab_helpers import Gcf
    for num in sorted(plt.get_fignums()):
        manager = Gcf.figs.get(num)
        if manager is not None:
            mpl_figure(manager.canvas.figure)
    plt.close("all")


def display(value):
    """The cell's last expression: True when it was sent as a figure (a
    matplotlib Figure), so that its text is not printed. (Sage's objects
    are shown by its display manager: display.py.)"""
    if items.current() is None:
        return False
    fig_mod = sys.modules.get("matplotlib.figure")
    if fig_mod is not None and isinstance(value, fig_mod.Figure):
        mpl_figure(value)
        _close(value)
        return True
    return False


def _close(fig):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close(fig)


# -- what hooks.py installs once in the worker, inherited by every job

def patch_pyplot(plt):
    """pyplot.show and Figure.show send their figures while a job collects
    them (hooks.py installs this once pyplot is imported)."""
    real_show = plt.show

    def show(*args, **kwargs):
        if items.current() is None:
            return real_show(*args, **kwargs)
        flush_open()
    show.__doc__ = real_show.__doc__
    plt.show = show
    from matplotlib.figure import Figure
    real_fig_show = Figure.show

    def fig_show(self, *args, **kwargs):
        if items.current() is None:
            return real_fig_show(self, *args, **kwargs)
        mpl_figure(self)
        _close(self)
    Figure.show = fig_show


def cap_sage_graphics(dm):
    """Sage's figures are drawn within the long-side cap (display.py
    installs the display manager's backend, then calls this)."""
    real_from_save = dm.graphics_from_save

    def graphics_from_save(save_function, save_kwds, file_extension, output_container, figsize=None, dpi=None):
        kwds = dict(save_kwds)
        if figsize is not None:
            kwds["figsize"] = figsize
        if dpi is not None:
            kwds["dpi"] = dpi
        out = items.current()
        if out is not None:
            # The graphic's own options (plot(..., figsize=15)) count
            # unless the call overrides them (Graphics.save merges them so).
            own = getattr(getattr(save_function, "__self__", None), "_extra_kwds", None)
            if isinstance(own, dict):
                for k in ("figsize", "dpi"):
                    if kwds.get(k) is None and own.get(k) is not None:
                        kwds[k] = own[k]
            _cap_size(kwds, out.max_side)
        return real_from_save(save_function, kwds, file_extension, output_container)
    dm.graphics_from_save = graphics_from_save


def _cap_size(kwds, side):
    """A Sage figure of a huge figsize is drawn smaller rather than huge
    first: Sage lays it out at the figure's own dpi (100), so a figsize of
    100 inches would need a 10000-pixel canvas before any scaling. Then the
    dpi keeps the long side within the cap."""
    figsize = kwds.get("figsize")
    try:
        if isinstance(figsize, (list, tuple)):
            inches = max(float(v) for v in figsize)
        else:
            inches = float(figsize) if figsize is not None else SAGE_FIGSIZE
        dpi = float(kwds.get("dpi") or SAGE_DPI)
    except (TypeError, ValueError):
        return  # Sage says what is wrong with them
    if inches <= 0 or dpi <= 0:
        return
    if inches * SAGE_DPI > side:
        f = side / (inches * SAGE_DPI)
        kwds["figsize"] = [float(v) * f for v in figsize] if isinstance(figsize, (list, tuple)) else inches * f
        inches *= f
    if inches * dpi > side:
        kwds["dpi"] = side / inches
