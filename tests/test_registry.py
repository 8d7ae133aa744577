"""The name -> plugin registries."""

from __future__ import annotations

import pytest

from xmlthresh.datasets import DATASETS
from xmlthresh._util.registry import Registry, UnknownNameError


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


# ---------------------------------------------------------------------------------------------- one builder
def _widgets() -> Registry:
    registry = Registry("widget")

    @registry.register("w")
    class Widget:
        def __init__(self, size: int, colour: str = "red") -> None:
            self.size, self.colour = size, colour

        def _check_params(self) -> None:
            if self.size < 0:
                raise ValueError(f"size must be >= 0, got {self.size}")

    return registry


def test_build_checks_names_unknown_and_missing_parameters_and_values():
    from xmlthresh._util.registry import ConfigError

    registry = _widgets()
    assert registry.build("w", {"size": 2}).colour == "red"
    with pytest.raises(ConfigError, match=r"widget 'w' has no parameter\(s\) bogus; its parameters: colour, size"):
        registry.build("w", {"size": 2, "bogus": 1})
    with pytest.raises(ConfigError, match=r"widget 'w' needs the parameter\(s\) size"):
        registry.build("w", {})
    with pytest.raises(ValueError, match="size must be >= 0"):
        registry.build("w", {"size": -1})
    with pytest.raises(UnknownNameError, match="unknown widget 'v'; known: w"):
        registry.build("v", {})


def test_build_reports_a_plugin_whose_dependency_is_missing():
    from xmlthresh._util.registry import UnavailableError

    registry = Registry("widget")
    registry.register("needy")(type("Needy", (), {"unavailable_reason": staticmethod(lambda: "pip install foo")}))
    with pytest.raises(UnavailableError, match="widget 'needy' is unavailable: pip install foo"):
        registry.build("needy", {})
    assert type(registry.build("needy", {}, check_available=False)).__name__ == "Needy"


def _registries():
    from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
    from xmlthresh.rankers import RANKERS
    from xmlthresh.strategies import STRATEGIES

    return {"strategy": STRATEGIES, "dataset": DATASETS, "ranker": RANKERS, "estimator": ESTIMATORS,
            "cde_dataset": CDE_DATASETS}


@pytest.mark.parametrize("group", ["strategy", "dataset", "ranker", "estimator", "cde_dataset"])
def test_every_registered_class_rejects_an_unknown_parameter_by_name(group):
    """``+estimator.bogus=1`` and its kind in every group: one ConfigError naming the parameter."""
    from xmlthresh._util.registry import ConfigError

    registry = _registries()[group]
    for name in registry.names():
        with pytest.raises(ConfigError, match=rf"{group} '{name}' has no parameter\(s\) bogus; its parameters: "):
            registry.build(name, {"bogus": 1}, check_available=False)


def test_registries_import_only_the_module_of_the_name_asked_for():
    """A lookup imports ``<package>.<name>``; listing discovers every module (no import list to edit)."""
    import subprocess
    import sys

    script = ("import sys\nfrom xmlthresh.strategies import STRATEGIES\nSTRATEGIES.get('independent')\n"
              "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('xmlthresh.strategies.')"
              " and not m.rsplit('.', 1)[1].startswith('_')))\n"
              "print(len(STRATEGIES.names()))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split("\n")
    assert "domain" not in out[0] and "pu" not in out[0] and "'independent'" in out[0]
    assert int(out[1]) >= 10


def test_every_built_in_plugin_is_found_in_the_module_its_name_points_to():
    """A lookup imports ``<package>.<name>`` or the registry's ``modules`` entry: for every built-in name that
    is the module that registers it, so no lookup falls back to importing the whole package (``espgame``'s
    loader ``ranked_lists`` imported every data set module, scipy.special among them)."""
    from xmlthresh.cde.registry import CDE_DATASETS, ESTIMATORS
    from xmlthresh.datasets.registry import DATASETS
    from xmlthresh.rankers.registry import RANKERS
    from xmlthresh.strategies.registry import STRATEGIES

    for registry in (DATASETS, STRATEGIES, RANKERS, ESTIMATORS, CDE_DATASETS):
        registry.discover()
        for name, obj in registry._entries.items():
            if obj.__module__.startswith(registry.package + "."):
                assert obj.__module__ == f"{registry.package}.{registry.modules.get(name, name)}", (registry.kind, name)


def test_looking_up_the_ranked_list_loader_imports_no_other_data_set():
    import subprocess
    import sys

    script = ("import sys\nfrom xmlthresh.datasets.registry import DATASETS\nDATASETS.get('ranked_lists')\n"
              "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('xmlthresh.datasets.')))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "ranked_list_loader" in out and "synthetic_xmc_posterior" not in out and "mulan" not in out
