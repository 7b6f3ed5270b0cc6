"""The controls of an interact (interact.py), as Sage's own interact makes
them: the functions a model calls (slider, range_slider, selector,
checkbox, input_box, input_grid, color_selector, text_control, with the
signatures of sage.repl.ipython_kernel.widgets_sagenb) and the plain
defaults it writes (n=5, f=True, c=['a','b'], (0, 10), ...: auto(), the
rules of sage.repl.ipython_kernel.interact.sage_interactive and of the
ipywidgets interact it extends). Sage's are ipywidgets widgets, which are
not installed in the sandbox and would need a Jupyter kernel to draw: these
are plain objects that declare themselves to the host as data.

Each control has:
  declare()   what the host and the viewer get: {"type", ...}; the host
              checks every value a viewer sends against it before anything
              runs in the session (src/tools/interact_check.c)
  default     the value in that wire form (a number, an index into options,
              a bool, a string, rows of strings, "#rrggbb")
  check(v)    the same check as the host's, made again here (ValueError)
  convert(v)  the wire value as the function gets it (an Integer for a
              slider over Integers, an option's own object for a selector,
              an input box's text evaluated as Sage does, a Color)

Wire forms, by type:
  slider          {min, max, step, default}: a number on the step grid
                  within [min, max]; or {options: [label...], default}: an
                  index (a slider over a list of values)
  range_slider    the same with two values [low, high], low <= high
  selector        {options: [label...], buttons, default}: an index
  checkbox        {default}: true or false
  input_box       {default, rows, evaluate}: a string (evaluate: the text
                  is evaluated as a Sage expression, as Sage's input_box
                  does unless type=str)
  input_grid      {rows, cols, default}: rows x cols strings, each
                  evaluated
  color_selector  {default}: "#rrggbb"
  text_control    {text}: shown, never set"""
import math
import numbers
import re
import sys

# Bounds the host holds values and declarations to as well
# (src/tools/interact_check.c): what one control may declare.
MAX_OPTIONS = 1000
MAX_LABEL = 200
MAX_TEXT = 10000
MAX_GRID_CELLS = 400
MAX_CELL = 1000
# Relative slack for a slider value on its grid and at its ends (the
# viewer's range input computes min + k*step in binary floating point).
GRID_SLACK = 1e-9
COLOR = re.compile(r"#[0-9a-fA-F]{6}\Z")


def _label(x):
    s = str(x)
    return s if len(s) <= MAX_LABEL else s[:MAX_LABEL - 1] + "\u2026"


def _sage(name):
    """A Sage module when Sage is imported (a Sage session), else None: a
    Python session's interacts work without it."""
    return sys.modules.get(name)


def _wire_number(x):
    """A slider's number as JSON: an int when it is integral, else a float."""
    if isinstance(x, bool):
        raise TypeError("a slider's bounds are numbers, not %r" % (x,))
    if isinstance(x, numbers.Integral):
        return int(x)
    f = float(x)
    if not math.isfinite(f):
        raise ValueError("a slider's bounds must be finite, not %r" % (x,))
    return f


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_index(v, n):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n


class Control:
    """One control; label None: the parameter's name."""
    type = None

    def __init__(self, label=None):
        self.label = None if label is None else _label(label)

    def declare(self):
        raise NotImplementedError

    def check(self, v):
        raise NotImplementedError

    def convert(self, v, glb):
        return v

    def __repr__(self):
        return "%s control %s" % (self.type, self.declare())


class NumberSlider(Control):
    """A slider over [min, max] by step (pair: a range slider). parent:
    what a value becomes (int, float, or a Sage parent such as ZZ or RR,
    in which a value is computed exactly as vmin + k * step)."""
    type = "slider"

    def __init__(self, vmin, vmax, step, default=None, label=None, parent=None, pair=False):
        super().__init__(label)
        self.min, self.max, self.step = _wire_number(vmin), _wire_number(vmax), _wire_number(step)
        if self.step <= 0:
            raise ValueError("a slider's step must be positive, not %r" % (step,))
        if self.max < self.min:
            raise ValueError("a slider's maximum %r is below its minimum %r" % (vmax, vmin))
        if parent is None:
            parent = int if all(isinstance(x, int) for x in (self.min, self.max, self.step)) else float
        self.parent, self.origin = parent, (vmin, step)
        self.steps = int(math.floor((self.max - self.min) / self.step * (1 + GRID_SLACK)))
        self.pair = pair
        if pair:
            self.type = "range_slider"
            if default is None:  # ipywidgets' range default: the middle half
                default = (0.75 * self.min + 0.25 * self.max, 0.25 * self.min + 0.75 * self.max)
            if not (isinstance(default, (tuple, list)) and len(default) == 2):
                raise TypeError("a range slider's default is a pair (low, high), not %r" % (default,))
            self.default = [self._wire(k) for k in sorted(self._snap(d) for d in default)]
        else:
            self.default = self._wire(self._snap(self.min if default is None else default))

    def _snap(self, x):
        """The grid step nearest to x, within the ends."""
        try:
            k = round((float(x) - self.min) / self.step)
        except (TypeError, ValueError):
            raise TypeError("a slider's default must be a number, not %r" % (x,)) from None
        return min(max(k, 0), self.steps)

    def _wire(self, k):
        return self.min + k * self.step

    def declare(self):
        return {"type": self.type, "min": self.min, "max": self.max, "step": self.step, "default": self.default}

    def _check_one(self, v):
        if not _is_number(v):
            raise ValueError("must be a number")
        span = max(self.max - self.min, self.step)
        if v < self.min - GRID_SLACK * span or v > self.max + GRID_SLACK * span:
            raise ValueError("%r is outside %r..%r" % (v, self.min, self.max))
        k = (v - self.min) / self.step
        if abs(k - round(k)) > 1e-6:
            raise ValueError("%r is not on the slider's steps of %r from %r" % (v, self.step, self.min))

    def check(self, v):
        if not self.pair:
            return self._check_one(v)
        if not (isinstance(v, list) and len(v) == 2):
            raise ValueError("must be a pair [low, high]")
        for x in v:
            self._check_one(x)
        if v[0] > v[1]:
            raise ValueError("its low end %r is above its high end %r" % (v[0], v[1]))

    def _value(self, v):
        k = min(max(round((v - self.min) / self.step), 0), self.steps)
        p = self.parent
        if p is int or p is float:
            return p(self.min + k * self.step)
        vmin, step = self.origin
        return p(vmin) + k * p(step)

    def convert(self, v, glb):
        return tuple(self._value(x) for x in v) if self.pair else self._value(v)


class OptionSlider(Control):
    """A slider over a list of values (Sage's SelectionSlider): the wire
    value is an index."""
    type = "slider"

    def __init__(self, values, default=None, label=None, pair=False, default_is_index=False):
        super().__init__(label)
        self.values = list(values)
        if len(self.values) > MAX_OPTIONS:
            raise ValueError("a slider takes at most %d values, not %d" % (MAX_OPTIONS, len(self.values)))
        if not self.values:
            raise ValueError("a slider over a list needs at least one value")
        self.pair = pair
        if pair:
            self.type = "range_slider"
            d = (0, len(self.values) - 1) if default is None else [closest(self.values, x) for x in default]
            self.default = sorted(d)
        else:
            self.default = default if default_is_index else closest(self.values, default)

    def declare(self):
        return {"type": self.type, "options": [_label(v) for v in self.values], "default": self.default}

    def check(self, v):
        n = len(self.values)
        if not self.pair:
            if not _is_index(v, n):
                raise ValueError("must be an index from 0 to %d" % (n - 1))
            return
        if not (isinstance(v, list) and len(v) == 2 and all(_is_index(x, n) for x in v)):
            raise ValueError("must be a pair of indices from 0 to %d" % (n - 1))
        if v[0] > v[1]:
            raise ValueError("its low end is above its high end")

    def convert(self, v, glb):
        return tuple(self.values[i] for i in v) if self.pair else self.values[v]


def closest(values, x):
    """The index of x in values, or of the value nearest to it (Sage's
    selection slider moves a default onto one of its values)."""
    if x is None:
        return 0
    i = _index_of(values, x)
    if i is not None:
        return i
    try:
        return min(range(len(values)), key=lambda i: abs(values[i] - x))
    except Exception:
        return 0


class Selector(Control):
    """A drop-down menu, or a row of buttons: the wire value is an index."""
    type = "selector"

    def __init__(self, options, labels, default=None, label=None, buttons=False):
        super().__init__(label)
        self.values, self.labels, self.buttons = list(options), [_label(x) for x in labels], bool(buttons)
        if not self.values:
            raise ValueError("a selector needs at least one value")
        if len(self.values) > MAX_OPTIONS:
            raise ValueError("a selector takes at most %d values, not %d" % (MAX_OPTIONS, len(self.values)))
        self.default = 0
        if default is not None:
            i = _index_of(self.values, default)
            if i is None:
                raise ValueError("the default %r is not one of the selector's values" % (default,))
            self.default = i

    def declare(self):
        return {"type": "selector", "options": self.labels, "buttons": self.buttons, "default": self.default}

    def check(self, v):
        if not _is_index(v, len(self.values)):
            raise ValueError("must be an index from 0 to %d" % (len(self.values) - 1))

    def convert(self, v, glb):
        return self.values[v]


def _index_of(values, x):
    for i, v in enumerate(values):
        if v is x:
            return i
    for i, v in enumerate(values):
        try:
            if v == x:
                return i
        except Exception:
            pass
    return None


class Checkbox(Control):
    type = "checkbox"

    def __init__(self, default=True, label=None):
        super().__init__(label)
        self.default = bool(default)

    def declare(self):
        return {"type": "checkbox", "default": self.default}

    def check(self, v):
        if not isinstance(v, bool):
            raise ValueError("must be true or false")


def evaluate(text, glb):
    """An input box's text as Sage's input_box gives it: evaluated with
    sage_eval in the session's globals (plain eval in a Python session)."""
    se = _sage("sage.misc.sage_eval")
    if se is not None:
        return se.sage_eval(text, glb)
    return eval(text, glb)


def _check_text(v, limit):
    if not isinstance(v, str):
        raise ValueError("must be a string")
    if len(v) > limit:
        raise ValueError("is %d characters long; the most is %d" % (len(v), limit))
    if "\0" in v:
        raise ValueError("contains a NUL character")


class InputBox(Control):
    """A text box (rows > 1: a text area). evaluate: its text is evaluated
    and then passed through transform, as Sage's input_box(type=...) does;
    else the function gets the text."""
    type = "input_box"

    def __init__(self, default="", label=None, evaluate=True, transform=None, rows=1, width=80):
        super().__init__(label)
        self.default = "" if default is None else (default if isinstance(default, str) else str(default))
        if len(self.default) > MAX_TEXT:
            raise ValueError("an input box's default is at most %d characters" % MAX_TEXT)
        self.evaluate, self.transform = bool(evaluate), transform
        self.rows = max(1, min(int(rows), 50))
        self.width = max(1, min(int(width), 200))

    def declare(self):
        return {"type": "input_box", "default": self.default, "rows": self.rows, "width": self.width,
                "evaluate": self.evaluate}

    def check(self, v):
        _check_text(v, MAX_TEXT)

    def convert(self, v, glb):
        if not self.evaluate:
            return v
        x = evaluate(v, glb)
        return self.transform(x) if self.transform is not None else x


class InputGrid(Control):
    """rows x cols text boxes, each evaluated; to_value gets the rows."""
    type = "input_grid"

    def __init__(self, nrows, ncols, default=None, label=None, to_value=None, width=4):
        super().__init__(label)
        self.rows, self.cols = int(nrows), int(ncols)
        if self.rows < 1 or self.cols < 1 or self.rows * self.cols > MAX_GRID_CELLS:
            raise ValueError("an input grid has 1 to %d cells, not %d x %d" % (MAX_GRID_CELLS, self.rows, self.cols))
        if not isinstance(default, list):  # one value for every cell
            default = [[default] * self.cols for _ in range(self.rows)]
        elif not all(isinstance(r, list) for r in default):  # a flat list, row by row
            default = [[default[i * self.cols + j] for j in range(self.cols)] for i in range(self.rows)]
        if len(default) != self.rows or any(len(r) != self.cols for r in default):
            raise ValueError("an input grid's default must be %d rows of %d values" % (self.rows, self.cols))
        self.default = [[str(x)[:MAX_CELL] for x in r] for r in default]  # (None too, as Sage)
        self.to_value, self.width = to_value, max(1, min(int(width), 40))

    def declare(self):
        return {"type": "input_grid", "rows": self.rows, "cols": self.cols, "width": self.width,
                "default": self.default}

    def check(self, v):
        if not (isinstance(v, list) and len(v) == self.rows
                and all(isinstance(r, list) and len(r) == self.cols for r in v)):
            raise ValueError("must be %d rows of %d strings" % (self.rows, self.cols))
        for r in v:
            for x in r:
                _check_text(x, MAX_CELL)

    def convert(self, v, glb):
        rows = [[evaluate(x, glb) for x in r] for r in v]
        return self.to_value(rows) if self.to_value is not None else rows


class ColorSelector(Control):
    """A color; the function gets a Sage Color (a "#rrggbb" string in a
    Python session)."""
    type = "color_selector"

    def __init__(self, default=(0, 0, 1), label=None, hide_box=False):
        super().__init__(label)
        self.default = html_color(default)
        self.hide_box = bool(hide_box)

    def declare(self):
        return {"type": "color_selector", "default": self.default, "hide_box": self.hide_box}

    def check(self, v):
        if not (isinstance(v, str) and COLOR.match(v)):
            raise ValueError('must be a color "#rrggbb"')

    def convert(self, v, glb):
        colors = _sage("sage.plot.colors")
        return colors.Color(v) if colors is not None else v.lower()


def html_color(c):
    """"#rrggbb" of a Sage color, a name, a hex string or an (r, g, b) of
    floats in [0, 1]."""
    colors = _sage("sage.plot.colors")
    if colors is not None:
        return colors.Color(c).html_color()
    if isinstance(c, str) and COLOR.match(c):
        return c.lower()
    if isinstance(c, (tuple, list)) and len(c) == 3:
        return "#" + "".join("%02x" % max(0, min(255, int(round(float(x) * 255)))) for x in c)
    raise ValueError("a color is '#rrggbb' or (r, g, b), not %r" % (c,))


class TextControl(Control):
    """Text shown among the controls (Sage's text_control); the function
    gets the text."""
    type = "text_control"

    def __init__(self, text=""):
        super().__init__("")
        self.text = str(text)[:MAX_TEXT]
        self.default = None

    def declare(self):
        return {"type": "text_control", "text": self.text}

    def check(self, v):
        raise ValueError("is text, not a control")

    def convert(self, v, glb):
        return self.text
