"""Option YAMLs cannot drift from the constructors they configure.

Every option of every group names a registered class (``name``; a dataset option may name the plugin that
reads it with ``loader``), and every other key is a parameter of that class. The *base* option of a class
(the one whose file name is the registry name, e.g. ``strategy/domain.yaml``) lists every parameter with the
constructor's default, so the YAML is the documentation of the defaults and not a second copy that can
disagree; interpolations (``${seed}``) say where a default comes from the run instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from xmlthresh.cde import CDE_DATASETS, ESTIMATORS
from xmlthresh.datasets import DATASETS
from xmlthresh.config.plugins import load_plugins
from xmlthresh.rankers import RANKERS
from xmlthresh._util.registry import constructor_defaults, constructor_parameters
from xmlthresh.strategies import STRATEGIES

load_plugins()

ROOT = Path(__file__).resolve().parents[1]
#: the package's options, the folder plugins' and the installed peers'
CONF_DIRS = [ROOT / "xmlthresh" / "conf", *sorted(ROOT.glob("plugins/*/conf")), *sorted(ROOT.glob("plugins/*/*/conf"))]
REGISTRIES = {"strategy": STRATEGIES, "dataset": DATASETS, "ranker": RANKERS, "estimator": ESTIMATORS,
              "cde_dataset": CDE_DATASETS}
#: parameters set by the run, not by the option: the top-level ``beta`` of every strategy, the run's seed as
#: ``random_state``, the data set's target box as an estimator's ``bounds``
SET_BY_THE_RUN = {"strategy": {"beta"}, "ranker": {"random_state"}, "estimator": {"random_state", "bounds"}}
#: keys that select the class, not parameters of it
SELECTORS = ("name", "loader")


def _options() -> list[tuple[str, Path]]:
    found = []
    for group in REGISTRIES:
        for root in CONF_DIRS:
            found += [(group, path) for path in sorted((root / group).rglob("*.yaml"))]
    return found


def _load(group: str, path: Path) -> dict:
    """The option as written (interpolations unresolved); an option built on another one through its
    ``defaults`` list (``- /strategy/domain@_here_``) is merged onto that one first."""
    option = OmegaConf.load(path)
    merged = OmegaConf.create()
    for entry in OmegaConf.to_container(option).pop("defaults", []) if "defaults" in option else []:
        if entry != "_self_":
            base = str(entry).split("@")[0].lstrip("/")
            merged = OmegaConf.merge(merged, _load(group, next(root / f"{base}.yaml" for root in CONF_DIRS
                                                                  if (root / f"{base}.yaml").is_file())))
    mine = OmegaConf.to_container(option, resolve=False)
    mine.pop("defaults", None)
    return OmegaConf.to_container(OmegaConf.merge(merged, mine), resolve=False)


def _registry_key(group: str, option: dict) -> str:
    return option.get("loader") or option["name"] if group == "dataset" else option["name"]


def _class_or_skip(group: str, option: dict, path: Path):
    """The class the option names; an option shipped by a plugin that is not installed here (an optional one,
    e.g. plugins/xmlthresh-mdn, which needs PyTorch) is skipped, not failed."""
    name = _registry_key(group, option)
    if name not in REGISTRIES[group].names() and (ROOT / "plugins") in path.parents:
        plugin = path.relative_to(ROOT).parts[1]
        pytest.skip(f"{group} {name!r} is not registered: its plugin ({plugin}) is not installed")
    return REGISTRIES[group].get(name)


def _label(item: tuple[str, Path]) -> str:
    group, path = item
    return f"{group}/{path.stem}" if path.parent.name == group else f"{group}/{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("group, path", _options(), ids=map(_label, _options()))
def test_every_key_is_a_parameter_of_the_named_class(group, path):
    option = _load(group, path)
    cls = _class_or_skip(group, option, path)
    accepted, required = constructor_parameters(cls)
    keys = set(option) - set(SELECTORS) | ({"name"} & set(option) & set(accepted))
    assert keys <= set(accepted), f"{path.name}: not parameters of {cls.__name__}: {sorted(keys - set(accepted))}"
    missing = set(required) - set(option) - SET_BY_THE_RUN.get(group, set())
    assert not missing, f"{path.name}: required parameters of {cls.__name__} missing: {sorted(missing)}"


def _base_options() -> list[tuple[str, Path]]:
    base = []
    for group, path in _options():
        option = _load(group, path)
        if path.parent.name == group and path.stem == _registry_key(group, option):
            base.append((group, path))
    return base


@pytest.mark.parametrize("group, path", _base_options(), ids=map(_label, _base_options()))
def test_base_options_list_every_parameter_with_its_default(group, path):
    option = _load(group, path)
    cls = _class_or_skip(group, option, path)
    defaults = constructor_defaults(cls)
    accepted, _ = constructor_parameters(cls)
    unlisted = set(accepted) - set(option) - SET_BY_THE_RUN.get(group, set())
    assert not unlisted, f"{path.name} does not list the parameters {sorted(unlisted)} of {cls.__name__}"
    differ = {key: (value, defaults[key]) for key, value in option.items()
              if key in defaults and not _interpolation(value) and _plain(value) != _plain(defaults[key])}
    assert not differ, f"{path.name} differs from the defaults of {cls.__name__} (yaml, constructor): {differ}"


def test_every_registered_class_has_a_base_option():
    """The option named like the registry key exists for every registered class, plugins' included."""
    listed = {(group, path.stem) for group, path in _base_options()}
    # not the fake plugins other tests register
    ours = {"xmlthresh", "xmlthresh_peers", "xmlthresh_mdn", "xmlthresh_flow", "xmlthresh_libmultilabel"}
    for group, registry in REGISTRIES.items():
        for name in registry.names():
            if registry.get(name).__module__.split(".")[0] not in ours:
                continue
            assert (group, name) in listed, f"no {group}/{name}.yaml for the registered {group} {name!r}"


def _interpolation(value) -> bool:
    return isinstance(value, str) and value.startswith("${")


def _plain(value):
    """Lists and tuples compare equal (YAML has lists only); ints and floats by value."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
