"""The typed schema of every option group: each registered class's constructor annotations, applied to the
parameters it is built with (:meth:`xmlthresh._util.registry.Registry.build`, the one path from a config or a
library call to an object).

Why: the option groups (strategy, dataset, ranker, estimator, cde_dataset and the plugins') were free-form
mappings, each plugin checking what it thought of. A switch given as text was read by truthiness
(``dataset.include_predict_all=no`` meant true), a float given to an integer parameter was truncated
somewhere deep, a number given as text failed in the middle of a fit. Here every parameter is checked, and
converted where the command line cannot say better, by the type its constructor declares:

=====================  ==========================================================================================
annotation             accepted (converted)
=====================  ==========================================================================================
``bool``               ``True``/``False``; the words true/false, yes/no, on/off (any case), and 0/1, as the
                       typed top-level schema takes them -- nothing else
``int``                an integer, or a float with an integral value (``1e6``); never a bool
``float``              any real number (an int is kept as given); never a bool or a text
``str``                a text; a path object (``pathlib.Path``) or a number, which the command line parses as
                       one (``dataset.name=2008``), as text
``X | None``           ``None``, or what ``X`` accepts
``X | Y``              what ``X`` or ``Y`` accepts, tried in that order
lists, tuples, ...     left to the grid check (:func:`~xmlthresh._util.registry.check_sequence_params`)
``Any``                anything
=====================  ==========================================================================================

A parameter named ``seed`` or ``random_state`` is a seed wherever it is: an integer in [0, 2**32 - 1].
A real number must be finite (``cde_dataset.phi=inf`` produced NaN data that was blamed on the generator):
NaN never passes, and an infinity only for the parameters a class lists in ``infinite_params`` (a pooling
strength of ``inf`` is meaningful). Range rules (positive, within the memory budget, one of a few words) stay
with each class's
``_check_params``: a type cannot say them. ``tests/test_group_schema.py`` proves that every parameter of
every registered class has an annotation this module understands and that every key of every option file is
one of them.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import math
import numbers
import os
import types
import typing
from typing import Any, Mapping

import numpy as np

from xmlthresh._util.errors import InputError

#: the words a switch accepts, as OmegaConf's typed configs read them
TRUE_WORDS, FALSE_WORDS = frozenset({"true", "yes", "on"}), frozenset({"false", "no", "off"})
#: the parameters that seed a random generator, wherever they are: numpy's generators refuse a negative seed
#: (in words that name no option) and the 32-bit ones wrap a larger one onto another
SEED_KEYS = frozenset({"seed", "random_state"})
MAX_SEED = 2**32 - 1
#: the kinds of container an annotation can declare; their items are left to the grid check
SEQUENCES = (collections.abc.Sequence, collections.abc.Set)
MAPPINGS = (collections.abc.Mapping,)


class ParameterTypeError(InputError):
    """A parameter whose value its declared type does not accept; the message names ``<group>.<key>``, and
    :attr:`key` is that key."""

    def __init__(self, message: str, key: str = "") -> None:
        super().__init__(message)
        self.key = key


def parameter_types(cls: type) -> dict[str, Any]:
    """The declared type of every keyword parameter of ``cls.__init__`` (``Any`` where none is declared)."""
    try:  # a dataclass's generated __init__ does not resolve its string annotations: its fields do
        hints = typing.get_type_hints(cls if dataclasses.is_dataclass(cls) else cls.__init__)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve is untyped (the schema test names it)
        hints = {}
    return {key: hints.get(key, Any) for key, parameter in inspect.signature(cls.__init__).parameters.items()
            if key != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)}


def understood(annotation: Any) -> bool:
    """Whether :func:`convert` knows what ``annotation`` accepts (the schema test asserts it for every
    parameter; ``Any`` is understood, and accepts anything)."""
    if annotation in (bool, int, float, str, Any):
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return all(understood(arg) or arg is type(None) for arg in typing.get_args(annotation))
    return _container_kind(annotation) is not None


def _container_kind(annotation: Any) -> str | None:
    """"sequence" or "mapping" for an annotation of a container (``Sequence[float]``, ``list``, ``dict``), else
    None."""
    base = typing.get_origin(annotation) or annotation
    if not isinstance(base, type):
        return None
    if issubclass(base, (str, bytes)):
        return None
    if issubclass(base, MAPPINGS):
        return "mapping"
    if issubclass(base, SEQUENCES):
        return "sequence"
    return None


def convert(name: str, value: Any, annotation: Any) -> Any:
    """``value`` as the type ``annotation`` accepts (table in the module docstring), or a
    :class:`ParameterTypeError` naming ``name``, the expected type and the value."""
    accepted, converted = _try(value, annotation)
    if not accepted:
        raise ParameterTypeError(f"{name} must be {describe(annotation)}, got {value!r} ({type(value).__name__})",
                                 name.rsplit(".", 1)[-1])
    return converted


def describe(annotation: Any) -> str:
    """The type in words: ``true or false``, ``an integer``, ``a number``, ``a text``, ``... or null``."""
    words = {bool: "true or false", int: "an integer", float: "a number", str: "a text", type(None): "null"}
    if annotation in words:
        return words[annotation]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(describe(arg) for arg in typing.get_args(annotation))
    kind = _container_kind(annotation)
    return {"sequence": "a list", "mapping": "a mapping"}.get(kind or "", str(annotation))


def _try(value: Any, annotation: Any) -> tuple[bool, Any]:
    if annotation is Any:
        return True, value
    if annotation is type(None):
        return value is None, None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            accepted, converted = _try(value, arg)
            if accepted:
                return True, converted
        return False, value
    if annotation is bool:
        return _as_bool(value)
    if annotation is int:
        return _as_int(value)
    if annotation is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and not _is_numpy_bool(value):
            return True, value  # an int stays an int: every check takes it, and messages show what was given
        return False, value
    if annotation is str:
        if isinstance(value, str):
            return True, value
        if isinstance(value, os.PathLike):  # a pathlib.Path for a path parameter
            return True, os.fspath(value)
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            return True, str(value)
        return False, value
    kind = _container_kind(annotation)
    if kind == "mapping":
        return isinstance(value, collections.abc.Mapping), value
    if kind == "sequence":  # a list, a tuple, an array: not a text or a mapping (iterated letter by letter)
        ok = hasattr(value, "__iter__") and not isinstance(value, (str, bytes, collections.abc.Mapping))
        return ok, value
    return True, value  # other types: the class's own checks


def _as_bool(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool) or _is_numpy_bool(value):
        return True, bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS | FALSE_WORDS:
        return True, value.strip().lower() in TRUE_WORDS
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return True, bool(value)
    return False, value


def _as_int(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool) or _is_numpy_bool(value):
        return False, value
    if isinstance(value, numbers.Integral):
        return True, int(value)
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return True, int(value)
    return False, value


def _is_numpy_bool(value: Any) -> bool:
    return isinstance(value, np.bool_)


def typed_params(kind: str, cls: type, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with every value converted to its parameter's declared type (:func:`convert`), names in
    messages as ``<kind>.<key>``; parameters ``cls`` does not have are left for the caller to refuse."""
    types_of = parameter_types(cls)
    converted = {key: convert(f"{kind}.{key}", value, types_of[key]) if key in types_of else value
                 for key, value in params.items()}
    for key in SEED_KEYS & converted.keys():
        value = converted[key]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and not 0 <= value <= MAX_SEED:
            raise ParameterTypeError(f"{kind}.{key} must be a seed, an integer in [0, {MAX_SEED}], got {value!r}", key)
    infinite_ok = {name for klass in cls.__mro__ for name in vars(klass).get("infinite_params", ())}
    for key, value in converted.items():
        if key not in types_of or key in infinite_ok:
            continue
        numbers_given = [value] if isinstance(value, numbers.Real) else _listed_numbers(value)
        bad = next((number for number in numbers_given if not isinstance(number, numbers.Integral)
                    and not math.isfinite(number)), None)
        if bad is not None:  # in a list too: alpha=[inf,0.3] gave NaN targets, blamed on the data
            what = "a finite number" if numbers_given == [value] else "a list of finite numbers"
            raise ParameterTypeError(f"{kind}.{key} must be {what}, got {value!r}", key)
    return converted


def _listed_numbers(value: Any) -> list:
    """The real numbers of a list, tuple or array given as a parameter (nested lists flattened); [] for
    anything else (a text is not a list of letters)."""
    if isinstance(value, (str, bytes, collections.abc.Mapping)) or not hasattr(value, "__iter__"):
        return []
    found: list = []
    for item in value:
        if isinstance(item, numbers.Real) and not isinstance(item, bool):
            found.append(item)
        else:
            found.extend(_listed_numbers(item))
    return found
