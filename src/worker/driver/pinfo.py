"""What x? and x?? print in a cell (magics.Shell's pinfo): IPython's
inspector's fields, from Sage's sageinspect for Sage objects."""


def show(obj, source, sage):
    """Print obj's fields, one `Label: text` each (a multi-line text, the
    docstring and the source below their label); source: x??."""
    for label, text in fields(obj, source, sage):
        if text:
            print("%s:%s%s" % (label, "\n" if "\n" in text or label in ("Docstring", "Source") else " ",
                               text.rstrip("\n")))


def fields(obj, source, sage):
    """(label, text) pairs for x? and x??: as IPython's inspector, with
    Sage's sageinspect for Sage objects (Cython functions keep their
    signatures and sources there)."""
    import inspect
    doc = sig = src = path = None
    if sage:
        from sage.misc import sageinspect
        try:
            doc = sageinspect.sage_getdoc(obj)
        except Exception:
            doc = None
        try:
            sig = sageinspect.sage_getdef(obj)
            if sig is not None:
                sig = getattr(obj, "__name__", "") + sig
        except Exception:
            sig = None
        if source:
            try:
                src = sageinspect.sage_getsource(obj)
            except Exception:
                src = None
        try:
            path = sageinspect.sage_getfile(obj) or None
        except Exception:
            path = None
    else:
        doc = inspect.getdoc(obj)
        try:
            sig = getattr(obj, "__name__", "") + str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = None
        if source:
            try:
                src = inspect.getsource(obj)
            except (TypeError, OSError):
                src = None
        try:
            path = inspect.getfile(obj)
        except TypeError:
            path = None
    out = [("Signature", sig)]
    if src:
        out.append(("Source", src))
    else:
        out.append(("Docstring", doc or "<no docstring>"))
    out += [("File", path), ("Type", type(obj).__name__)]
    return out
