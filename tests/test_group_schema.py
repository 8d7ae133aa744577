"""The typed schema of every option group (:mod:`xmlthresh._util.typed_params`): every parameter of every
registered class declares a type the schema understands, every key of every option file is such a parameter
and its value passes that type, and a value is converted or refused by its type alone -- so that no option of
any group is read by truthiness again (``dataset.include_predict_all=no`` meant true)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlthresh._util.typed_params import ParameterTypeError, convert, parameter_types, typed_params, understood
from xmlthresh._util.errors import InputError
from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS
from xmlthresh.config.options import options
from xmlthresh.config.plugins import load_plugins
from xmlthresh.datasets import DATASETS
from xmlthresh.rankers import RANKERS
from xmlthresh.strategies import STRATEGIES

load_plugins()
REGISTRIES = {"strategy": STRATEGIES, "dataset": DATASETS, "ranker": RANKERS, "estimator": ESTIMATORS,
              "cde_dataset": CDE_DATASETS}
#: the keys of an option file that name what to build rather than parameters of it
NAMING_KEYS = {"strategy": ("name",), "dataset": ("loader",), "ranker": ("name",), "estimator": ("name",),
               "cde_dataset": ("name",)}


def _every_class():
    for group, registry in REGISTRIES.items():
        for name in registry.names():
            yield group, name, registry.get(name)


@pytest.mark.parametrize("group, name, cls", list(_every_class()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_parameter_of_every_registered_class_has_a_type_the_schema_understands(group, name, cls):
    untyped = {key: annotation for key, annotation in parameter_types(cls).items()
               if annotation is Any or not understood(annotation)}
    assert not untyped, f"{group} {name!r}: parameters without a type the schema checks: {untyped}"


def _option_params(group: str, option: str) -> tuple[type, dict[str, Any]]:
    from xmlthresh.config.compose import compose

    node = dict(compose([f"{group}={option}"] + (["task=cde"] if group in ("estimator", "cde_dataset") else []))[group])
    built = node.get("loader") if group == "dataset" else None
    name = built or node.get("name")
    params = {key: value for key, value in node.items() if key not in NAMING_KEYS[group]}
    return REGISTRIES[group].get(name), params


def _every_option():
    for group in REGISTRIES:
        for option in options(group):
            yield group, option.name


@pytest.mark.parametrize("group, option", list(_every_option()))
def test_every_key_of_every_option_file_is_a_typed_parameter_and_its_value_passes(group, option):
    """The presets validated against the schema: a key the class does not take, or a value its type refuses,
    would fail every run of the option."""
    cls, params = _option_params(group, option)
    types_of = parameter_types(cls)
    assert set(params) <= set(types_of), f"{group}={option}: keys without a parameter: {set(params) - set(types_of)}"
    typed_params(group, cls, params)  # raises ParameterTypeError for a value its type refuses


@pytest.mark.fast
@pytest.mark.parametrize("value, expected", [
    (True, True), (False, False), (np.bool_(True), True), ("yes", True), ("No", False), ("on", True),
    ("OFF", False), ("true", True), (1, True), (0, False),
])
def test_a_switch_takes_what_means_true_or_false(value, expected):
    assert convert("dataset.include_predict_all", value, bool) is expected


@pytest.mark.fast
@pytest.mark.parametrize("value, annotation, message", [
    ("maybe", bool, "must be true or false, got 'maybe' (str)"),
    (2, bool, "must be true or false, got 2 (int)"),
    ("", bool, "must be true or false"),
    (1.5, int, "must be an integer, got 1.5 (float)"),
    (True, int, "must be an integer, got True (bool)"),
    ("10", int, "must be an integer, got '10' (str)"),
    ("abc", float, "must be a number, got 'abc' (str)"),
    (False, float, "must be a number, got False (bool)"),
    ("x", Optional[float], "must be a number or null"),
    ("abc", Sequence[float], "must be a list, got 'abc' (str)"),
    ({"a": 1}, Optional[Sequence[str]], "must be a list or null"),
    ([1, 2], str, "must be a text, got [1, 2] (list)"),
])
def test_a_value_its_type_refuses_is_one_error_naming_the_key(value, annotation, message):
    with pytest.raises(ParameterTypeError, match=r"^strategy\.key " + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        convert("strategy.key", value, annotation)


@pytest.mark.fast
def test_numbers_are_converted_the_way_the_command_line_means_them():
    assert convert("k", 1e6, int) == 1_000_000 and isinstance(convert("k", 1e6, int), int)
    assert convert("k", np.int64(3), int) == 3 and type(convert("k", np.int64(3), int)) is int
    assert convert("k", 5, float) == 5 and convert("k", 2.5, float) == 2.5
    assert convert("k", 2008, str) == "2008"
    from pathlib import Path

    assert convert("dataset.path", Path("/tmp/x.npz"), str) == "/tmp/x.npz"
    assert convert("k", None, Optional[int]) is None
    assert convert("k", 0.5, float | str) == 0.5 and convert("k", "auto", float | str) == "auto"
    assert convert("k", np.array([1.0, 2.0]), Sequence[float]) is not None


@pytest.mark.fast
@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                 st.lists(st.integers(), max_size=3)),
       st.sampled_from([bool, int, float, str, Optional[int], Optional[float], float | str, Sequence[float]]))
def test_convert_either_returns_a_value_of_the_type_or_refuses_naming_the_key(value, annotation):
    """Never a silent pass-through of a value of another type, never another kind of exception."""
    try:
        converted = convert("group.key", value, annotation)
    except ParameterTypeError as exc:
        assert str(exc).startswith("group.key must be ")
        return
    allowed = {bool: (bool,), int: (int,), float: (float, int), str: (str,), Optional[int]: (int, type(None)),
               Optional[float]: (float, int, type(None)), float | str: (float, int, str),
               Sequence[float]: (list,)}[annotation]
    assert isinstance(converted, allowed) and not (annotation in (int, float) and isinstance(converted, bool))


def test_a_group_switch_is_read_by_its_type():
    """``dataset.include_predict_all=no`` is false (it was refused, and before that read as true)."""
    dataset = DATASETS.build("synthetic", {"include_predict_all": "no", "n_labels": 5, "num_docs": 40})
    assert dataset.include_predict_all is False
    with pytest.raises(InputError, match=r"^dataset\.include_predict_all must be true or false, got "
                                         r"'maybe' \(str\)$"):
        DATASETS.build("synthetic", {"include_predict_all": "maybe"})
