"""The name -> plugin registries."""

from __future__ import annotations

import pytest

from xmlthresh.datasets import DATASETS
from xmlthresh.registry import Registry, UnknownNameError


def test_register_get_and_list():
    registry = Registry("widget")

    @registry.register("b")
    class B:
        pass

    @registry.register("a")
    class A:
        pass

    assert registry.get("a") is A and A.registry_name == "a"
    assert registry.names() == ["a", "b"] and "b" in registry and len(registry) == 2


def test_unknown_name_lists_known_ones():
    registry = Registry("widget")
    registry.register("x")(type("X", (), {}))
    with pytest.raises(UnknownNameError, match=r"unknown widget 'y'; known: x"):
        registry.get("y")


def test_names_are_unique():
    registry = Registry("widget")
    registry.register("x")(type("X", (), {}))
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("x")(type("Y", (), {}))


def test_builtin_datasets_are_registered():
    assert {"ranked_lists", "synthetic"} <= set(DATASETS.names())
