"""Sage's interact controls by the names and signatures a model writes:
slider, range_slider, selector, checkbox, input_box, input_grid,
color_selector, text_control (sage.repl.ipython_kernel.widgets_sagenb,
Sage 9.5 and 10.x), and auto(): a parameter's plain default made into a
control by the rules of Sage's own @interact (sage_interactive, over
ipywidgets' interact):

  5, -2.5          a slider from -|v| to 3|v| (0: 0 to 1) starting at v
  True             a checkbox
  'text'           a text box; the function gets the text
  ['a', 'b'], {label: value}, a tuple of 4 or more
                   a drop-down menu of the values
  (a, b)           a slider from a to b (step 1 for integers, else 0.1),
                   starting in the middle; (a, b, step) with that step
  (1..10), a generator
                   a slider over its values
  ('label', c)     c, labelled; (default, c) for a list c: c from default
  a Sage matrix    an input grid (the function gets a matrix of its parent)
  a Sage Color     a color selector
  anything else    a text box holding str(v), evaluated (sin(x) stays
                   an expression)

The controls themselves are controls.py."""
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping, Sequence

from . import controls as c
from .controls import _sage

# A generator is read up to this many values (SageMathCell reads 10000;
# a slider declares at most controls.MAX_OPTIONS).
TAKE = c.MAX_OPTIONS + 1


def _parent_of(xs):
    """The common parent of a slider's numbers: Sage's parent() of their
    sum (SR counts as RR: symbolic constants slide numerically), or the
    Python type of it."""
    s = sum(x for x in xs if x is not None)
    el = _sage("sage.structure.element")
    if el is not None:
        p = el.parent(s)
        abc = _sage("sage.rings.abc")
        if abc is not None and isinstance(p, abc.SymbolicRing):
            from sage.rings.real_mpfr import RR
            p = RR
        return p
    return type(s)


def _zero_kind(p):
    """'int', 'rational' or 'real' for a parent (its zero's number class)."""
    try:
        z = p()
    except Exception:
        z = p(0)
    if isinstance(z, numbers.Integral):
        return "int"
    if isinstance(z, numbers.Rational):
        return "rational"
    if isinstance(z, numbers.Real):
        return "real"
    raise TypeError("unknown parent %r for slider" % (p,))


def _srange(vmin, vmax, step):
    """vmin, vmin + step, ... up to vmax included."""
    out, k = [], 0
    while len(out) <= c.MAX_OPTIONS:
        v = vmin + k * step
        if v > vmax:
            break
        out.append(v)
        k += 1
    return out


def slider(vmin, vmax=None, step_size=None, default=None, label=None, display_value=True, _range=False):
    """Sage's slider: over a list of values, or from vmin to vmax (100 when
    not given) by step_size (1 for integers, 0.1 otherwise); values are of
    the numbers' parent (Integer for Integers, RR for symbolic ones,
    rationals: over the listed steps)."""
    if isinstance(vmin, Iterable) and not isinstance(vmin, str):
        if vmax is not None:
            raise TypeError("unexpected argument 'vmax' for a selection slider")
        if step_size is not None:
            raise TypeError("unexpected argument 'step_size' for a selection slider")
        return c.OptionSlider(_take(vmin), default, label, pair=_range)
    p = _parent_of((vmin, vmax, step_size))
    kind = _zero_kind(p)
    conv = (lambda x: None if x is None else p(x)) if p not in (int, float) else (lambda x: x)
    vmin, vmax, step_size = conv(vmin), conv(vmax), conv(step_size)
    if kind == "rational":
        step = step_size if step_size is not None else p(1)
        values = _srange(vmin, vmax if vmax is not None else p(100), step)
        if default is None and not _range:
            mid = vmin + ((vmax if vmax is not None else p(100)) - vmin) / 2
            default = vmin + math.floor((mid - vmin) / step) * step
        return c.OptionSlider(values, default, label, pair=_range)
    if vmax is None:
        vmax = p(100) if p not in (int, float) else (100 if kind == "int" else 100.0)
    if step_size is None:
        step_size = 1 if kind == "int" else 0.1
        if p not in (int, float):
            step_size = p(step_size)
    parent = p if p not in (int, float) else (int if kind == "int" else float)
    return c.NumberSlider(vmin, vmax, step_size, default, label, parent=parent, pair=_range)


def range_slider(vmin, vmax=None, step_size=None, default=None, label=None, display_value=True):
    """Sage's range_slider: a slider with two ends; the function gets the
    pair (low, high)."""
    return slider(vmin, vmax, step_size, default, label, display_value, _range=True)


def checkbox(default=True, label=None):
    return c.Checkbox(default, label)


def selector(values, label=None, default=None, nrows=None, ncols=None, width=None, buttons=False):
    """Sage's selector: a drop-down menu, or buttons (buttons=True, or
    nrows/ncols given). values: a list, [(value, label), ...], or a
    mapping {label: value}."""
    vals, labels = _options(values)
    return c.Selector(vals, labels, default, label, buttons=buttons or nrows is not None or ncols is not None)


def _options(values):
    if isinstance(values, Mapping):
        return list(values.values()), [str(k) for k in values.keys()]
    if isinstance(values, Sequence) and not isinstance(values, str):
        values = list(values)
    else:
        values = _take(values)
    if values and isinstance(values[0], tuple) and len(values[0]) == 2 and all(
            isinstance(v, tuple) and len(v) == 2 for v in values):
        return [v for v, _ in values], [str(lb) for _, lb in values]
    return values, [str(v) for v in values]


def input_box(default=None, label=None, type=None, width=80, height=1, **kwargs):
    """Sage's input_box: type=str gives the text; otherwise the text is
    evaluated (sage_eval) and type, when given, is applied to the value."""
    colors = _sage("sage.plot.colors")
    if colors is not None and type is colors.Color:
        return c.ColorSelector(default if default is not None else (0, 0, 1), label)
    return c.InputBox(default, label, evaluate=type is not str, transform=None if type in (None, str) else type,
                      rows=height, width=width)


def input_grid(nrows, ncols, default=None, label=None, to_value=None, width=4):
    return c.InputGrid(nrows, ncols, default, label, to_value, width)


def color_selector(default=(0, 0, 1), label=None, widget=None, hide_box=False):
    return c.ColorSelector(default, label, hide_box)


def text_control(value=""):
    return c.TextControl(value)


API = {f.__name__: f for f in (slider, range_slider, checkbox, selector, input_box, input_grid, color_selector,
                               text_control)}


def _take(it):
    vals = []
    for v in it:
        vals.append(v)
        if len(vals) >= TAKE:
            break
    return vals


def _numeric(x):
    """A symbolic constant (pi, sqrt(2)) as a number."""
    el = _sage("sage.structure.element")
    abc = _sage("sage.rings.abc")
    if el is not None and abc is not None and isinstance(el.parent(x), abc.SymbolicRing):
        return x.numerical_approx()
    return x


def _real(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _from_tuple(t):
    if len(t) == 2 and isinstance(t[0], str):
        w = auto(t[1])
        w.label = c._label(t[0])
        return w
    if len(t) == 2 and isinstance(t[1], Iterable) and not isinstance(t[1], str):
        return _with_default(t[1], t[0])
    t = tuple(_numeric(x) for x in t)
    if len(t) in (2, 3) and all(_real(x) for x in t):
        ints = all(isinstance(x, numbers.Integral) for x in t)
        lo, hi = t[0], t[1]
        step = t[2] if len(t) == 3 else (1 if ints else 0.1)
        if not hi > lo:
            raise ValueError("a slider (min, max) needs max > min, not %r" % (t,))
        if step <= 0:
            raise ValueError("a slider's step must be positive, not %r" % (step,))
        k = math.floor((hi - lo) / 2 / step)  # the middle, on a step (ipywidgets)
        parent = int if ints else float
        return c.NumberSlider(lo, hi, step, lo + k * step, parent=parent)
    return _from_iterable(t)


def _with_default(abbrev, default):
    """(default, values): the control of values, starting at default."""
    w = auto(abbrev)
    if isinstance(w, c.Selector):
        i = c._index_of(w.values, default)
        if i is None:
            raise ValueError("the default %r is not one of the values %r" % (default, abbrev))
        w.default = i
    elif isinstance(w, c.OptionSlider) and not w.pair:
        w.default = c.closest(w.values, default)
    elif isinstance(w, c.NumberSlider) and not w.pair:
        w.default = w._wire(w._snap(default))
    return w


def _from_iterable(v):
    if isinstance(v, Iterator):
        return c.OptionSlider(_take(v))
    vals, labels = _options(v)
    return c.Selector(vals, labels)


def _from_value(v):
    if isinstance(v, str):
        return c.InputBox(v, evaluate=False)
    if isinstance(v, bool):
        return c.Checkbox(v)
    if isinstance(v, numbers.Integral):
        lo, hi = (v * 0, v * 0 + 1) if v == 0 else ((-v, 3 * v) if v > 0 else (3 * v, -v))
        return c.NumberSlider(int(lo), int(hi), 1, int(v), parent=int)
    if isinstance(v, numbers.Real):
        f = float(v)
        lo, hi = (0.0, 1.0) if f == 0 else ((-f, 3 * f) if f > 0 else (3 * f, -f))
        return c.NumberSlider(lo, hi, 0.1, f, parent=float)
    return None


def auto(v):
    """The control for a parameter's default (or an abbreviation given to
    interact by name)."""
    if isinstance(v, c.Control):
        return v
    el = _sage("sage.structure.element")
    if el is not None and isinstance(v, el.Matrix):
        return c.InputGrid(v.nrows(), v.ncols(), v.list(), to_value=v.parent())
    colors = _sage("sage.plot.colors")
    if colors is not None and isinstance(v, colors.Color):
        return c.ColorSelector(v)
    if isinstance(v, tuple):
        return _from_tuple(v)
    w = _from_value(v)
    if w is not None:
        return w
    if isinstance(v, Iterable):
        return _from_iterable(v)
    return c.InputBox(str(v), evaluate=True)
