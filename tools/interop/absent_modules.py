"""Placeholders for optional dependencies that fairseq imports at start-up for models and tasks
unrelated to text translation (audio, scikit-learn, ...). fairseq's registries import every
task and model module; these stand-ins let those imports succeed. Using one (calling it,
reading its attributes' attributes) raises, so a translation run that needed one would fail
loudly rather than compute something different."""

import importlib.abc
import importlib.machinery
import sys
import types


class _Absent:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        raise ImportError(f"interop stub: '{self._name}' is not installed here")

    def __mro_entries__(self, bases):
        return (object,)


class _AbsentModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Absent(f"{self.__name__}.{attr}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _AbsentModule(spec.name)
        module.__path__ = []
        module.__version__ = "0"  # fairseq reads sacrebleu.__version__[0] at import
        return module

    def exec_module(self, module):
        pass


def install(roots):
    """Make every module under the given top-level names importable as a placeholder."""
    missing = []
    for root in roots:
        try:
            importlib.import_module(root)
        except ImportError:
            missing.append(root)
    if missing:
        sys.meta_path.append(_Finder(missing))
    return missing
