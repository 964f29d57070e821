"""Every public name of the package is documented, the examples in the docstrings run,
help() reads well, and the type stub of the extension covers what it exports."""

from __future__ import annotations

import doctest
import inspect
import pydoc
import re
from pathlib import Path

import pytest

import csan
import csan.metrics
from csan import _inference, _native


def public_objects():
    for module in (csan, csan.metrics, csan.errors):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
                yield f"{module.__name__}.{name}", obj
                if inspect.isclass(obj):
                    for attr, member in vars(obj).items():
                        if not attr.startswith("_") and (inspect.isfunction(member) or isinstance(member, staticmethod)):
                            yield f"{module.__name__}.{name}.{attr}", member


@pytest.mark.parametrize("name, obj", list(public_objects()), ids=lambda v: v if isinstance(v, str) else "")
def test_public_names_have_docstrings(name: str, obj: object) -> None:
    doc = inspect.getdoc(obj.__func__ if isinstance(obj, staticmethod) else obj)
    assert doc and len(doc) > 20, name


@pytest.mark.parametrize("module", ["csan.metrics", "csan.metrics.compat"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(__import__(module, fromlist=["_"]), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_help_text() -> None:
    text = pydoc.render_doc(csan.metrics.corpus_bleu, renderer=pydoc.plaintext)
    assert "corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[Optional[str]]]," in text
    for parameter in ["hypotheses", "references", "smooth_method", "tokenize", "use_effective_order"]:
        assert f":param {parameter}:" in text
    assert "BLEUScore" in text


@pytest.mark.parametrize("extension", [_native, _inference], ids=["_native", "_inference"])
def test_stub_covers_the_extension(extension) -> None:
    name = extension.__name__.split(".")[-1]
    stub = (Path(csan.__file__).parent / f"{name}.pyi").read_text(encoding="utf-8")
    declared = set(re.findall(r"^(?:class|def) (\w+)|^(\w+):", stub, re.M))
    names = {a or b for a, b in declared}
    exported = {name for name in dir(extension) if not name.startswith("_")}
    assert exported - names == set()
    if extension is _native:
        assert "__version__" in names
    assert (Path(csan.__file__).parent / "py.typed").exists()
