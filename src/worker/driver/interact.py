"""@interact, as Sage's own (sage.repl.ipython_kernel.interact, SageNB,
SageMathCell), in every Sage and Python interpreter of the driver:

    @interact
    def _(n=slider(1, 20, 1, default=5), f=selector(['sin', 'cos'])):
        show(plot(eval(f)(n*x), (x, 0, 2*pi)))

    interact(f, n=(1, 10))          # the function form
    @interact(n=(1, 10))            # abbreviations given by name
    def g(n, auto_update=False): .. # manual: runs when the user says so

Making one runs the function once with the controls' defaults and sends,
on the job's display pipe (items.py), an item of the kind "interact"
around that first rendering:

    b"D" kind JSON     {"id", "controls": [{"name", "label", "type", ...}],
                        "manual"} (controls.py has the types)
    the rendering's own records (text, LaTeX, figures, ...)
    b"E" kind          the rendering is over

Text the function prints is in the rendering too, as text items, in order
with the rest (and on stdout, as any output). In a session the function is
kept (at most MAX_KEPT, the oldest forgotten first) under its id, and a
run frame naming it (interp.py, op "run" with "interact") runs it again
with the values a viewer sent (update()): each checked against its control
first (the host checked them too), then converted as Sage would, then the
function runs in the session's globals and its display items are the
call's. Outside a session (a stateless call) nothing is kept; the host
says the controls need a session. With no figure pipe (a background job)
the function runs once and a line says what its controls were.

The function returns the function itself, as ipywidgets' interact does,
with .widget the interact (a cell ending in interact(f) shows nothing)."""
import json
import os
import sys
from collections import OrderedDict

from . import controls, figures, items
from .tracebacks import print_user_traceback
from .widgets import auto

# Interacts a session keeps (each holds its function and what it refers to).
MAX_KEPT = 64
# An interact's controls (its parameters).
MAX_CONTROLS = 64

_kept = OrderedDict()  # id -> Interact, in a session's interpreter
_keep = False          # True in a session's interpreter: interacts are kept
_running = None        # the Interact whose function runs now (no nesting)


class Interact:
    def __init__(self, f, names, ctls, manual, pass_kwargs):
        self.id = "i" + os.urandom(8).hex()
        self.f, self.names, self.controls, self.manual = f, names, ctls, manual
        self.pass_kwargs = pass_kwargs  # names that are not parameters go in **kwargs

    def declare(self):
        out = []
        for n in self.names:
            ctl = self.controls[n]
            d = ctl.declare()
            d["name"] = n
            d["label"] = n if ctl.label is None else ctl.label
            out.append(d)
        return {"id": self.id, "controls": out, "manual": self.manual}

    def kwargs(self, values, glb):
        """The function's arguments from wire values (missing: defaults)."""
        kw = {}
        for n in self.names:
            ctl = self.controls[n]
            v = values.get(n, ctl.default)
            kw[n] = ctl.convert(v, glb)
        return kw

    def check(self, values):
        """ValueError naming the control, as the host says it."""
        if not isinstance(values, dict):
            raise ValueError("the values must be an object {name: value}")
        for n, v in values.items():
            ctl = self.controls.get(n)
            if ctl is None:
                raise ValueError("interact %s has no control %r (it has %s)" % (self.id, n, ", ".join(self.names)))
            try:
                ctl.check(v)
            except ValueError as e:
                raise ValueError("control %r (%s): %s" % (n, ctl.type, e)) from None

    def __repr__(self):
        return "Interactive function %r with %d controls" % (self.f, len(self.names))


def _make(f, abbrevs):
    import inspect
    if not callable(f):
        raise TypeError("interact takes a function, not %r" % (f,))
    prev = getattr(f, "widget", None)
    if isinstance(prev, Interact):  # interact(f) of an interact's function: its controls given by name too
        abbrevs = dict(prev.abbrevs, **abbrevs)
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        raise TypeError("interact cannot read the parameters of %r" % (f,)) from None
    params = OrderedDict(sig.parameters)
    manual = False
    p = params.pop("auto_update", None)
    if p is not None:
        manual = p.default is False
    var_kw = any(q.kind is q.VAR_KEYWORD for q in params.values())
    names, ctls = [], {}
    for name, q in params.items():
        if q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
            continue
        if name in abbrevs:
            abbrev = abbrevs[name]
        elif q.default is not q.empty:
            abbrev = q.default
        else:
            raise ValueError("interact: the argument %r of %s has no default and no control; give it one, "
                             "e.g. %s=slider(0, 10)" % (name, getattr(f, "__name__", "the function"), name))
        names.append(name)
        ctls[name] = auto(abbrev)
    for name, abbrev in abbrevs.items():
        if name in ctls:
            continue
        if not var_kw:
            raise ValueError("interact: %s has no argument %r" % (getattr(f, "__name__", "the function"), name))
        names.append(name)
        ctls[name] = auto(abbrev)
    if len(names) > MAX_CONTROLS:
        raise ValueError("interact: at most %d controls, not %d" % (MAX_CONTROLS, len(names)))
    it = Interact(f, names, ctls, manual, var_kw)
    it.abbrevs = abbrevs
    return it


def interact(_f=None, **abbrevs):
    """@interact, @interact(name=control, ...), interact(f, name=control)."""
    if _f is None:
        return lambda f: interact(f, **abbrevs)
    it = _make(_f, abbrevs)
    f = it.f
    show(it)
    try:
        f.widget = it
    except (AttributeError, TypeError):
        pass
    return f


def show(it):
    """The interact's item around its first rendering; kept in a session."""
    global _running
    out = items.current()
    if _running is not None or out is None:
        why = ("inside another interact's function" if _running is not None
               else "here: controls need a session's call, whose result a viewer shows")
        sys.stdout.write("[interact %s: %s; no controls %s]\n"
                         % (getattr(it.f, "__name__", "?"), describe(it), why))
        run(it, {}, it.f.__globals__ if hasattr(it.f, "__globals__") else {})
        return
    header = json.dumps(it.declare(), separators=(",", ":"), allow_nan=False)
    if not out.item("interact", header.encode("utf-8")):
        # over the result's caps: the host does not know it, so it is neither
        # shown nor kept; the function still runs once
        run(it, {}, getattr(it.f, "__globals__", {}))
        return
    try:
        run(it, {}, getattr(it.f, "__globals__", {}))
    finally:
        out.end_group("interact")
    if _keep:
        _kept[it.id] = it
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)


def describe(it):
    """"n: slider 1..20, f: selector (sin, cos)": for a line of text."""
    parts = []
    for n in it.names:
        d = it.controls[n].declare()
        if "options" in d:
            opts = d["options"]
            parts.append("%s: %s (%s%s)" % (n, d["type"], ", ".join(opts[:5]), ", ..." if len(opts) > 5 else ""))
        elif "min" in d:
            parts.append("%s: %s %s..%s" % (n, d["type"], d["min"], d["max"]))
        else:
            parts.append("%s: %s" % (n, d["type"]))
    return ", ".join(parts) or "no controls"


class _Tee:
    """sys.stdout while an interact's function runs: what it prints goes
    to stdout as ever and, as text items, into its rendering, in order
    with its other items (flushed before each record)."""

    def __init__(self, real):
        self.real, self.parts = real, []
        self._sagebox_real = real  # display.py prints what it sends as an item here, not twice

    def write(self, s):
        n = self.real.write(s)
        self.parts.append(s)
        return n

    def flush_items(self):
        text, self.parts = "".join(self.parts), []
        out = items.current()
        if text and out is not None:
            if text.endswith("\n"):
                text = text[:-1]
            out.item("text", text.encode("utf-8", "replace"))

    def __getattr__(self, name):
        return getattr(self.real, name)


def run(it, values, glb):
    """Run the function with values (wire form, checked); 0, or 1 when it
    raised (its traceback printed as a cell's)."""
    global _running
    out = items.current()
    tee = _Tee(sys.stdout) if out is not None else None
    saved, _running = _running, it
    saved_before = out.before_record if out is not None else None
    if tee is not None:
        sys.stdout, out.before_record = tee, tee.flush_items
    try:
        kw = it.kwargs(values, glb)
        it.f(**kw)
        figures.flush_open()  # its matplotlib figures belong to this rendering
        return 0
    except BaseException as e:
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        print_user_traceback()
        return 1
    finally:
        _running = saved
        if tee is not None:
            if sys.stdout is tee:
                sys.stdout = tee.real
            out.before_record = None
            tee.flush_items()
            out.before_record = saved_before


def update(iid, data, glb):
    """A run frame for interact iid: data is the JSON object of values.
    The call's exit status."""
    it = _kept.get(iid)
    if it is None:
        sys.stderr.write("interact %s is not in this session any more: the session was reset or its interpreter "
                         "restarted (or it is one of more than %d). Run the cell that made it again.\n"
                         % (iid, MAX_KEPT))
        return 1
    try:
        values = json.loads(data)
        it.check(values)
    except ValueError as e:
        sys.stderr.write("interact_update: %s\n" % e)
        return 2
    return run(it, values, glb)


def install(glb):
    """interact and Sage's control functions in a job's globals (Sage's
    all_jupyter gives a notebook the same names; the terminal's Sage has
    none of them). A name the cell defines itself wins."""
    glb["interact"] = interact
    from .widgets import API
    glb.update(API)


def keep(on=True):
    """A session's interpreter keeps its interacts (for interact_update)."""
    global _keep
    _keep = on


def is_interact_function(value):
    return isinstance(getattr(value, "widget", None), Interact) if callable(value) else False


__all__ = ["interact", "update", "install", "keep", "controls"]
