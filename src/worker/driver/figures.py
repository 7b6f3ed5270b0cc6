"""Figures a job displays, inside the sandbox: Sage's show(p), p.show(), a
Graphics (or any object with a graphical rich output) as the cell's last
expression, matplotlib's plt.show() and fig.show(), a matplotlib Figure as
the last expression, and figures still open when the cell ends.

Each becomes a PNG at most caps["max_side"] pixels on its long side and is
written as one record on the job's figure pipe (never stdout or stderr):

    record := length (4 bytes, big-endian) body
    body   := b"P" PNG-bytes             a figure
            | b"F" N PNG-bytes           a figure a session saved as
                                         figure-N.png in its workspace
                                         (N: 4 bytes, big-endian)
            | b"S" reason                one not sent: b"c" over the count,
                                         b"i" too big even when shrunk,
                                         b"t" over what is left of the total
            | b"D" kind text | b"X" reason   a display item (display.py)

The caps come from the host in the job's run frame (defined once, in C:
core/figure.c). The driver applies them to keep the stream small; the host
applies them again and checks every PNG (runner/figstream.c), since the
job's own code can write anything to the pipe.

install() runs in the worker before any job (so every child inherits it):
Sage's display manager gets a backend (display.py) that turns a PNG into a
figure, and
matplotlib's pyplot.show and Figure.show are replaced, now or when pyplot
is first imported. begin() runs in a job's child with its pipe."""
import os
import struct
import sys

from .channel import write_all

# Figures smaller than this are not worth shrinking into the rest of the
# total: the driver says "over the total" instead.
MIN_BUDGET = 8 << 10
# Tries at shrinking a PNG that is over its byte budget.
SHRINK_TRIES = 5
# Sage's defaults (sage.plot.graphics): figsize 6.4 x 4.8 inches, 100 dpi.
SAGE_FIGSIZE = 6.4
SAGE_DPI = 100

_out = None  # the job's Sender; None: figures are not collected
_saved = None  # a session's last figure-N.png number; None: not looked yet


class Sender:
    def __init__(self, fd, caps, save_dir=None):
        self.fd, self.save_dir = fd, save_dir
        self.ident = _identity(fd)
        self.max_count = int(caps["max_count"])
        self.max_image = int(caps["max_image_bytes"])
        self.max_total = int(caps["max_total_bytes"])
        self.max_side = int(caps["max_side"])
        self.count = self.total = 0
        self.max_items = int(caps.get("max_items", 0))
        self.max_item = int(caps.get("max_item_bytes", 0))
        self.max_items_total = int(caps.get("max_items_total_bytes", 0))
        self.items = self.items_total = 0

    def _record(self, body):
        data = memoryview(struct.pack(">I", len(body)) + body)
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            pass  # the pipe is gone (the job closed it, or the worker): nothing to show

    def item(self, kind, data):
        """Send one display item (display.py) under its caps, or say why
        not. True when sent."""
        if self.items >= self.max_items:
            self._record(b"Xc")
        elif len(data) > self.max_item:
            self._record(b"Xi")
        elif self.items_total + len(data) > self.max_items_total:
            self._record(b"Xt")
        else:
            self.items += 1
            self.items_total += len(data)
            self._record(b"D" + kind + data)
            return True
        return False

    def png(self, data):
        """Send one figure, scaled and shrunk to the caps, or say why not."""
        if self.count >= self.max_count:
            self._record(b"Sc")
            return
        left = self.max_total - self.total
        if left < MIN_BUDGET:
            self._record(b"St")
            return
        budget = min(self.max_image, left)
        try:
            data = fit(data, self.max_side, budget)
        except Exception:
            _failed("scaling it")
            return
        if data is None:
            self._record(b"St" if left < self.max_image else b"Si")
            return
        self.count += 1
        self.total += len(data)
        n = _save(self.save_dir, data) if self.save_dir else None
        self._record(b"P" + data if n is None else b"F" + struct.pack(">I", n) + data)


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


def begin(fd, caps, save_dir=None, keep_fd=False):
    """In a job's child: figures go to fd (close-on-exec, so no program the
    job runs inherits it). caps None: the host wants none. A session's
    interpreter calls it for each call (keep_fd: the fd outlives the call)
    with its workspace as save_dir, and end() after the call."""
    global _out
    if caps is None:
        if not keep_fd:
            os.close(fd)
        return
    _out = Sender(fd, caps, save_dir)


def end():
    """The call is over: figures are no longer collected (a background job
    forked from a session's interpreter sends none)."""
    global _out
    _out = None


def close():
    """A job's child is about to _exit (its exit handlers ran): close the
    figure pipe now, as its fds 1 and 2, so that the worker sees the job's
    end at once. Left to _exit, the pipe would close only after the kernel
    tore down the child's copy of the worker's memory (~10 ms for Sage).
    Only if the fd is still that pipe: the job may have closed it and
    opened something else under its number."""
    global _out
    out, _out = _out, None
    if out is not None and out.ident is not None and _identity(out.fd) == out.ident:
        try:
            os.close(out.fd)
        except OSError:
            pass


def _identity(fd):
    """(device, inode) of what fd refers to, or None."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


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
    if _out is None:
        return
    import io
    w, h = fig.get_size_inches()
    dpi = min(fig.dpi, _out.max_side / max(w, h, 1e-3))
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
        _out.png(buf.getvalue())
    except Exception:
        _failed("matplotlib")


def flush_open():
    """Send every figure pyplot still has open, in the order of their
    numbers, and close them (the cell is over, or plt.show() was called)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if _out is None or plt is None:
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
    if _out is None:
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


# -- install: hooks set once in the worker, inherited by every job

def _patch_pyplot(plt):
    real_show = plt.show

    def show(*args, **kwargs):
        if _out is None:
            return real_show(*args, **kwargs)
        flush_open()
    show.__doc__ = real_show.__doc__
    plt.show = show
    from matplotlib.figure import Figure
    real_fig_show = Figure.show

    def fig_show(self, *args, **kwargs):
        if _out is None:
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
        if _out is not None:
            # The graphic's own options (plot(..., figsize=15)) count
            # unless the call overrides them (Graphics.save merges them so).
            own = getattr(getattr(save_function, "__self__", None), "_extra_kwds", None)
            if isinstance(own, dict):
                for k in ("figsize", "dpi"):
                    if kwds.get(k) is None and own.get(k) is not None:
                        kwds[k] = own[k]
            _cap_size(kwds, _out.max_side)
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


class _AfterImport:
    """A finder that runs a hook right after a module is first imported
    (pyplot in a plain Python job), delegating the import itself."""

    def __init__(self):
        self.hooks = {}

    def find_spec(self, name, path=None, target=None):
        hook = self.hooks.pop(name, None)
        if hook is None:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _HookedLoader(spec.loader, hook)
        return spec


class _HookedLoader:
    def __init__(self, real, hook):
        self.real, self.hook = real, hook

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        try:
            self.hook(module)
        except Exception:
            pass  # figures are lost, the job is not

    def __getattr__(self, name):
        return getattr(self.real, name)


_HOOKS = (
    ("matplotlib.pyplot", _patch_pyplot),
    ("sage.all", lambda m: __import__(__package__ + ".display", fromlist=["x"]).use_sage_backend(m)),
)


def install():
    """Hook pyplot and Sage's display manager, now if they are imported,
    else when they are (a Python job importing them)."""
    finder = None
    for name, hook in _HOOKS:
        if name in sys.modules:
            try:
                hook(sys.modules[name])
            except Exception:
                pass
            continue
        if finder is None:
            finder = _AfterImport()
            sys.meta_path.insert(0, finder)
        finder.hooks[name] = hook
