"""What makes a job's displayed objects items, installed once in the
worker (or a session's controller) before any job, and inherited by every
child: pyplot's show (figures.patch_pyplot) and Sage's display manager's
backend (display.use_sage_backend), now when the module is imported
already, else right after it is (a Python job importing them)."""
import sys

from . import display, figures


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
    ("matplotlib.pyplot", figures.patch_pyplot),
    ("sage.all", display.use_sage_backend),
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
