"""Every registered CDE estimator that tunes is a ``TunedCDE``: the parameters of the validation-split tuning
are declared once, in the base class, not again in each estimator, and their checks are the base's (a bad
value is a one-line ValueError naming the estimator and the parameter, before any fit).

The estimators are read off the registry (the installed plugins' included), so a new estimator is held to
the same contract without being listed here.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap

import numpy as np
import pytest

from xmlthresh._util.registry import constructor_parameters
from xmlthresh.cde import ESTIMATORS
from xmlthresh.cde.base import TunedCDE
from xmlthresh.config.plugins import load_plugins

load_plugins()

#: the shared parameters, their annotations (as written) and their defaults
SHARED = {f.name: f for f in dataclasses.fields(TunedCDE)}
#: the parameters that say an estimator tunes: its switch and the validation split's share and cap
TUNING_SWITCHES = {"tune", "val_fraction", "max_val"}


def _tunes(cls: type) -> bool:
    """Whether an estimator tunes, read off its own constructor and class (not off ``TunedCDE``): a tuning
    switch or a ``*_grid`` parameter, or declared ``tuned_grids``."""
    accepted, _ = constructor_parameters(cls)
    return bool(TUNING_SWITCHES & set(accepted)) or any(p.endswith("_grid") for p in accepted) \
        or bool(getattr(cls, "tuned_grids", ()))


TUNING = [name for name in ESTIMATORS.names() if _tunes(ESTIMATORS.get(name))]


def test_the_registry_holds_estimators_that_tune():
    assert len(TUNING) >= 2, ESTIMATORS.names()


@pytest.mark.parametrize("name", TUNING)
def test_every_estimator_that_tunes_is_a_tuned_cde(name):
    cls = ESTIMATORS.get(name)
    assert issubclass(cls, TunedCDE), f"{name} ({cls.__qualname__}) tunes but does not derive from TunedCDE"
    assert set(cls.tuned_grids) and all(hasattr(cls(), grid) for grid in cls.tuned_grids), name
    assert set(cls.count_grids) <= set(cls.tuned_grids) and set(cls.positive_grids) <= set(cls.tuned_grids)
    assert not set(cls.count_grids) & set(cls.positive_grids), name


def _class_tree(klass: type) -> ast.ClassDef:
    (tree,) = ast.parse(textwrap.dedent(inspect.getsource(klass))).body
    assert isinstance(tree, ast.ClassDef) and tree.name == klass.__name__
    return tree


def _default_override(stmt: ast.AnnAssign) -> bool:
    """``name: <TunedCDE's annotation> = field(default=..., kw_only=True)``: the one allowed way to name a
    shared parameter again (to give it another default; it stays keyword-only)."""
    call = stmt.value
    keywords = {k.arg: k.value for k in call.keywords} if isinstance(call, ast.Call) else {}
    return (isinstance(call, ast.Call) and ast.unparse(call.func) == "field" and not call.args
            and set(keywords) == {"default", "kw_only"} and ast.unparse(keywords["kw_only"]) == "True"
            and ast.unparse(stmt.annotation) == SHARED[stmt.target.id].type)


@pytest.mark.parametrize("name", TUNING)
def test_the_shared_parameters_are_declared_once(name):
    """No class between the estimator and ``TunedCDE`` writes an ``__init__``, declares or assigns a shared
    parameter (except to change its default) or sets one on ``self``; each is a dataclass that leaves
    equality and repr to scikit-learn's ``BaseEstimator``."""
    cls = ESTIMATORS.get(name)
    overridden: set[str] = set()
    for klass in cls.__mro__:
        if klass is TunedCDE or not issubclass(klass, TunedCDE):
            continue
        where = f"{name}: {klass.__qualname__}"
        assert "__dataclass_fields__" in vars(klass), f"{where} is not declared with @dataclass"
        assert not {"__eq__", "__repr__"} & set(vars(klass)), f"{where}: use @dataclass(eq=False, repr=False)"
        tree = _class_tree(klass)
        for stmt in tree.body:
            assert not (isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__"), f"{where} writes __init__"
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in SHARED:
                assert _default_override(stmt), f"{where} declares the shared parameter {stmt.target.id} again"
                overridden.add(stmt.target.id)
            if isinstance(stmt, ast.Assign):
                names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
                assert not names & set(SHARED), f"{where} assigns the shared parameter(s) {names & set(SHARED)}"
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
                    assert target.attr not in SHARED, f"{where} sets self.{target.attr}"
    parameters = inspect.signature(cls).parameters
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert list(parameters) == [f.name for f in fields.values() if not f.kw_only] + \
        [f.name for f in fields.values() if f.kw_only], f"{name}: the constructor is not the dataclass's"
    for key, shared in SHARED.items():
        parameter = parameters[key]
        assert parameter.kind is parameter.KEYWORD_ONLY and parameter.annotation == shared.type, (name, key)
        if key not in overridden:
            assert parameter.default == shared.default, (name, key)
        else:
            assert parameter.default != shared.default, f"{name} names {key} again without changing its default"


def _bad_values(cls: type) -> list[tuple[str, object, str]]:
    """(parameter, nonsense value, what the message says) for the shared parameters and every grid."""
    cases: list[tuple[str, object, str]] = [
        ("val_fraction", float("nan"), r"val_fraction must be in \(0, 1\)"),
        ("val_fraction", 0.0, r"val_fraction must be in \(0, 1\)"),
        ("max_val", 0, "max_val must be None or an integer >= 1"),
    ]
    for grid in cls.tuned_grids:
        if grid in cls.count_grids:
            cases += [(grid, [0, 5], f"{grid} must hold positive integers"), (grid, [], f"{grid} must hold")]
        elif grid in cls.positive_grids:
            cases += [(grid, [-0.1], f"{grid} must hold positive numbers"),
                      (grid, [np.nan], f"{grid} must hold positive numbers")]
        else:
            cases += [(grid, [np.inf], f"{grid} must hold finite numbers")]
    return cases


@pytest.mark.parametrize("name", TUNING)
def test_nonsense_tuning_values_are_one_line_errors_naming_the_estimator(name):
    cls = ESTIMATORS.get(name)
    ESTIMATORS.build(name, {}, check_available=False)  # the defaults pass
    for key, value, message in _bad_values(cls):
        with pytest.raises(ValueError, match=f"^{name}: {message}") as err:
            ESTIMATORS.build(name, {key: value}, check_available=False)
        assert "\n" not in str(err.value), (key, value)
    with pytest.raises(ValueError, match="tune must be true or false"):
        ESTIMATORS.build(name, {"tune": "maybe"}, check_available=False)
