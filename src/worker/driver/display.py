"""Sage's rich output, inside the sandbox: a backend for Sage's display
manager (sage.repl.rich_output), installed as Jupyter's BackendIPythonNotebook
and SageMathCell's backend_cell.py are, so that show(), pretty_print(),
%display, Graphics.show() and the cell's last expression all come here.

Each object shown is recorded, in order, in the richest form Sage gives it:

    plain text, ASCII/Unicode art   printed to stdout (as before) and sent as
                                    a "text" item
    LaTeX (%display latex, show())  a "latex" item (the source without its
                                    $ delimiters); not printed
    HTML (html(...))                an "html" item; not printed
    PNG (a 2D plot)                 a figure (figures.py)
    SVG (%display graphics vector)  an "svg" item
    a 3D scene (plot3d, sphere())   a "threejs" item: the scene as Sage's
                                    three.js page consumes it, then its PNG
                                    rendered by Tachyon as a figure (as before)

Each goes on the job's display pipe as an item of its kind (items.py):
"text", "latex", "html", "svg" (UTF-8 text), "threejs" (a JSON object),
"png" (figures.py). A "threejs" item is followed by its PNG when one could
be drawn. With no display pipe (a background job), everything is printed
as text, as before.

The Sage internals used here are listed, with the versions checked, in
docs/ARCHITECTURE.md ("Sage internals")."""
import json
import re
import sys

from . import figures, items

# What Sage's latex_formatter puts before every formula (Sage 9.5 and 10.x):
# dropped when the formula does not use \Bold, so the model reads the formula.
BOLD_PREAMBLE = "\\newcommand{\\Bold}[1]{\\mathbf{#1}}"
# The names Sage substitutes into ext_data/threejs/threejs_template.html, as
# the page's JavaScript variables, and the keys of the scene sent.
SCENE_VARS = (("options", "options"), ("b", "bounds"), ("lights", "lights"), ("ambient", "ambient"),
              ("texts", "texts"), ("points", "points"), ("lines", "lines"), ("surfaces", "surfaces"))

_current = None  # (obj, kwds) of the display manager's display_immediately
_BACKEND = None  # the backend's class, once installed


def item(kind, text):
    """Send one item (a str) if the job collects them. True when sent."""
    out = items.current()
    if out is None:
        return False
    return out.item(kind, text.encode("utf-8", "replace"))


def text_item(text):
    """A value shown as text (the cell printed it too)."""
    item("text", text)


def print_shown(text):
    """Print text that is also sent as a text item: past an interact's
    capture of stdout (interact.py), which would send it a second time."""
    out = sys.stdout
    getattr(out, "_sagebox_real", out).write(text + "\n")


def latex_source(s):
    """LaTeX without its $ or $$ delimiters and Sage's \\Bold preamble."""
    s = s.strip()
    for d in ("$$", "$"):
        if len(s) >= 2 * len(d) and s.startswith(d) and s.endswith(d):
            s = s[len(d):-len(d)]
            break
    if s.startswith(BOLD_PREAMBLE) and "\\Bold" not in s[len(BOLD_PREAMBLE):]:
        s = s[len(BOLD_PREAMBLE):]
    return s.strip()


def threejs_scene(html):
    """The scene of Sage's three.js page as a dict, from the values Sage
    substituted into its template (`var NAME = VALUE;`), each parsed as JSON;
    None when the page does not have them all."""
    dec = json.JSONDecoder()
    scene = {}
    for var, key in SCENE_VARS:
        m = re.search(r"\bvar %s = " % var, html)
        if m is None:
            return None
        try:
            scene[key], _ = dec.raw_decode(html, m.end())
        except ValueError:
            return None
    return scene


def _png_of(obj, kwds):
    """The 3D object drawn as a PNG, as Sage drew it before (Tachyon)."""
    from sage.repl.rich_output import get_display_manager
    from sage.repl.rich_output.display_manager import restricted_output
    from sage.repl.rich_output.output_basic import OutputPlainText
    from sage.repl.rich_output.output_graphics import OutputImagePng
    dm = get_display_manager()
    with restricted_output(dm, [OutputPlainText, OutputImagePng]):
        rich = dm._call_rich_repr(obj, dict(kwds))
    return rich.png.get() if isinstance(rich, OutputImagePng) else None


def emit(plain_text, rich, obj=None, kwds=None):
    """One object shown: rich is the output Sage chose, plain_text its text."""
    from sage.repl.rich_output import output_catalog as oc
    out = items.current()
    if isinstance(rich, (oc.OutputPlainText, oc.OutputAsciiArt, oc.OutputUnicodeArt)):
        s = rich.text.get_str()
        print_shown(s)
        text_item(s)
        return
    latex = None
    if isinstance(rich, oc.OutputLatex):
        latex = rich.latex.get_str()
    elif isinstance(rich, oc.OutputHtml) and getattr(rich, "latex", None) is not None:
        latex = rich.latex.get_str()  # a formula Sage wrapped for MathJax
    if latex is not None:
        latex = latex_source(latex)
        if out is None:
            print(latex)  # no display items: the text as %display latex gave it
        else:
            item("latex", latex)
        return
    if out is None:
        print(plain_text.text.get_str())
        return
    if isinstance(rich, oc.OutputHtml):
        item("html", rich.html.get_str())
    elif isinstance(rich, oc.OutputImagePng):
        figures.png(rich.png.get())
    elif isinstance(rich, oc.OutputImageSvg):
        item("svg", rich.svg.get_str())
    elif isinstance(rich, oc.OutputSceneThreejs):
        scene = threejs_scene(rich.html.get_str())
        if scene is not None:
            item("threejs", json.dumps(scene, separators=(",", ":"), allow_nan=False))
        png = None
        if obj is not None:
            try:
                png = _png_of(obj, kwds or {})
            except Exception:
                figures._failed("rendering the 3D scene as a PNG")
        if png is not None:
            figures.png(png)
        elif scene is None:
            print(plain_text.text.get_str())
    else:
        print(plain_text.text.get_str())


def show(value):
    """The cell's last expression, when Sage's display manager shows it (a
    Sage object with a rich output, or any value under %display latex or
    ascii_art): True when shown. Else the cell prints its repr."""
    dm_mod = sys.modules.get("sage.repl.rich_output.display_manager")
    if dm_mod is None or _BACKEND is None:
        return False
    dm = dm_mod.get_display_manager()
    if not isinstance(dm._backend, _BACKEND):
        return False
    from sage.structure.sage_object import SageObject
    rich_obj = isinstance(value, SageObject) and hasattr(value, "_rich_repr_")
    if not rich_obj and dm.preferences.text in (None, "plain"):
        return False
    plain, rich = dm._rich_output_formatter(value, {})
    emit(plain, rich, value, {})
    return True


def use_sage_backend(_sage_all):
    """Install the backend (once sage.all is imported: the display manager
    cannot be made while Sage is half imported)."""
    global _BACKEND
    from sage.repl.rich_output import display_manager as dm_module
    from sage.repl.rich_output import output_catalog as oc
    from sage.repl.rich_output.backend_base import BackendBase

    class BackendSagebox(BackendBase):
        def _repr_(self):
            return "sagebox"

        def supported_output(self):
            return {oc.OutputPlainText, oc.OutputAsciiArt, oc.OutputUnicodeArt, oc.OutputLatex,
                    oc.OutputHtml, oc.OutputImagePng, oc.OutputImageSvg, oc.OutputSceneThreejs}

        def threejs_offline_scripts(self):
            return ""  # the page is never used: the scene is sent as data

        def displayhook(self, plain_text, rich_output):
            self.display_immediately(plain_text, rich_output)

        def display_immediately(self, plain_text, rich_output):
            obj, kwds = _current if _current is not None else (None, None)
            emit(plain_text, rich_output, obj, kwds)

    _BACKEND = BackendSagebox
    dm = dm_module.get_display_manager()
    dm.switch_backend(BackendSagebox())
    real = dm.display_immediately

    def display_immediately(obj, **kwds):
        # the object itself, for a 3D scene's PNG (the backend gets only
        # its outputs)
        global _current
        saved, _current = _current, (obj, kwds)
        try:
            return real(obj, **kwds)
        finally:
            _current = saved
    dm.display_immediately = display_immediately
    figures.cap_sage_graphics(dm)
