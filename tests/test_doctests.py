"""The public API's docstrings are numpydoc and their examples run.

Every object ``xmlthresh/__init__.py`` exports (``xmlthresh.__all__``), and every public method and property
xmlthresh defines on an exported class, has a summary, the sections its signature calls for (Parameters when
it takes arguments, Returns when it returns something) and Examples; the Examples run as doctests and print
what they say. The documentation site's API reference (docs/api.md) is generated from these docstrings.
"""

from __future__ import annotations

import doctest
import inspect
import re
from typing import Any, Iterator

import pytest

import xmlthresh
import xmlthresh.api

#: the exported names (the package version is a string, not an object with a docstring)
EXPORTED = [name for name in xmlthresh.__all__ if name != "__version__"]
#: a numpydoc section heading: a title line underlined by dashes
SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.MULTILINE)
OPTIONS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def sections(docstring: str) -> set[str]:
    """The titles of a docstring's numpydoc sections."""
    return set(SECTION.findall(docstring))


def documented_members(name: str) -> Iterator[tuple[str, Any, str]]:
    """(qualified name, object, what it is) of an exported object and, for a class, of each public method,
    class method and property defined by xmlthresh on it or its xmlthresh bases (not those it inherits from
    scikit-learn or Python)."""
    obj = getattr(xmlthresh, name)
    yield f"xmlthresh.{name}", obj, "class" if isinstance(obj, type) else "function"
    if not isinstance(obj, type):
        return
    seen = set()
    for klass in obj.__mro__:
        if not klass.__module__.startswith("xmlthresh"):
            continue
        for attribute, value in vars(klass).items():
            if attribute.startswith("_") or attribute in seen:
                continue
            seen.add(attribute)
            if isinstance(value, property):
                yield f"xmlthresh.{name}.{attribute}", value, "property"
            elif isinstance(value, (classmethod, staticmethod)):
                yield f"xmlthresh.{name}.{attribute}", value.__func__, "method"
            elif inspect.isfunction(value):
                yield f"xmlthresh.{name}.{attribute}", value, "method"
            elif inspect.isfunction(getattr(value, "fn", None)):  # scikit-learn's available_if descriptor
                yield f"xmlthresh.{name}.{attribute}", value.fn, "method"


def required_sections(obj: Any, kind: str) -> set[str]:
    """The numpydoc sections an object's signature calls for."""
    if kind == "property":
        return {"Examples"}
    function = obj.__init__ if kind == "class" else obj
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin __init__ (an exception or warning class)
        signature = None
    needed = {"Examples"}
    if kind == "class":
        own_init = "__init__" in vars(obj) and obj.__module__.startswith("xmlthresh")
        is_dataclass = hasattr(obj, "__dataclass_fields__")
        if (own_init or is_dataclass) and signature is not None and \
                [p for p in signature.parameters if p not in ("self", "cls")]:
            needed.add("Parameters")
        return needed  # an exception or warning class takes Python's own arguments (the message): nothing to list
    if [p for p in signature.parameters if p not in ("self", "cls")]:
        needed.add("Parameters")
    if signature.return_annotation not in ("None", None):
        needed.add("Returns")
    return needed


def strategy_api() -> list[tuple[str, Any, str]]:
    """The strategy registry's and the strategies' public methods that docs/api.md documents next to the
    exports: how a strategy is found by name and used as an estimator."""
    from xmlthresh.strategies import STRATEGIES, BaseStrategy, ThresholdStrategy

    registry = type(STRATEGIES)
    return [(f"xmlthresh.strategies.STRATEGIES.{name}", getattr(registry, name), "method")
            for name in ("get", "names", "build")] + \
        [(f"xmlthresh.strategies.BaseStrategy.{name}", getattr(BaseStrategy, name), "method")
         for name in ("fit", "predict", "score")] + \
        [("xmlthresh.strategies.ThresholdStrategy.fit_lists", ThresholdStrategy.fit_lists, "method")]


MEMBERS = [member for name in EXPORTED for member in documented_members(name)] + strategy_api()


def test_the_members_are_found():
    """The walk reaches the methods the issue names (fit, predict, save, load) and the exceptions."""
    names = {qualified for qualified, _, _ in MEMBERS}
    for expected in ("xmlthresh.fit_thresholds", "xmlthresh.ThresholdClassifier.fit",
                     "xmlthresh.ThresholdClassifier.predict", "xmlthresh.ThresholdClassifier.predict_proba",
                     "xmlthresh.ThresholdResult.predict", "xmlthresh.ThresholdResult.save",
                     "xmlthresh.ThresholdResult.load", "xmlthresh.ThresholdResult.n_labels", "xmlthresh.InputError"):
        assert expected in names
    assert not any(".get_params" in name or ".set_params" in name for name in names)  # scikit-learn's own


def test_section_parser():
    doc = "Summary.\n\nParameters\n----------\nx : int\n    A number.\n\nReturns\n-------\nint\n\nExamples\n--------\n>>> 1\n1\n"
    assert sections(doc) == {"Parameters", "Returns", "Examples"}
    assert sections("Summary.\n\nParameters: x, y.\n") == set()


def test_the_check_sees_a_missing_section():
    def undocumented(x: int) -> int:
        """Summary.

        Examples
        --------
        >>> undocumented(1)
        1
        """
        return x

    assert required_sections(undocumented, "function") - sections(inspect.getdoc(undocumented)) == \
        {"Parameters", "Returns"}


@pytest.mark.parametrize("qualified, obj, kind", MEMBERS, ids=[member[0] for member in MEMBERS])
def test_numpydoc_sections(qualified, obj, kind):
    docstring = inspect.getdoc(obj) or ""
    summary = docstring.strip().split("\n\n", 1)[0]
    assert summary and not SECTION.search(summary), f"{qualified}: no summary line"
    missing = required_sections(obj, kind) - sections(docstring)
    assert not missing, f"{qualified} ({kind}): missing numpydoc section(s) {sorted(missing)}"


def run_examples(members: list[tuple[str, Any, str]]) -> int:
    """Run the examples of ``members``' docstrings; fails with doctest's report; returns how many ran."""
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=OPTIONS)
    tried = 0
    for qualified, obj, _ in members:
        test = parser.get_doctest(inspect.getdoc(obj) or "", {}, qualified, None, None)
        if not test.examples:
            continue
        report: list[str] = []
        result = runner.run(test, out=report.append)
        assert result.failed == 0, f"{qualified}: {result.failed} of {result.attempted} examples failed\n" + \
            "".join(report)
        tried += result.attempted
    return tried


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("name", EXPORTED)
def test_the_examples_run(name, in_tmp):
    """Every example of the exported object and of its methods runs and prints what it says."""
    assert run_examples(list(documented_members(name))) > 0, f"xmlthresh.{name} has no example"


def test_the_strategy_api_examples_run(in_tmp):
    members = strategy_api()
    assert run_examples(members) >= len(members)


@pytest.mark.parametrize("module", [xmlthresh.api], ids=lambda module: module.__name__)
def test_the_module_examples_run(module):
    failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0
