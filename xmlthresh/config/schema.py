"""The typed schema of the primary config: every top-level switch, number and setting, checked once, at
composition, for every key.

Why: a switch read by truthiness takes any text for true (``force=no`` re-ran every finished sweep job,
``tracking.enabled=off`` still tracked, ``warm_up=abc`` warmed up). With the schema, OmegaConf converts what
means a bool (``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0``) and refuses everything else, and
likewise for integers and floats, before any job starts; the command line shows the refusal as one line
(:func:`xmlthresh.cli.hydra_messages.one_line_hydra_errors`). A key that no config file declares is refused too.

The schema is registered in Hydra's ConfigStore as ``xmlthresh_schema`` and is the first entry of the
primary config's defaults list (``xmlthresh/conf/config.yaml``), which then fills in the values. The option
groups (strategy, dataset, ranker, estimator, cde_dataset) are mappings here: their schema is each registered
class's constructor annotations, applied to every key when the option is built, before any data is loaded
(:mod:`xmlthresh._util.typed_params`; tests/test_group_schema.py proves every key of every option typed). Rules a type cannot say
(``task`` and ``tracking.sync`` among a few words, ``plots`` true, false or auto, ``interval.level`` in (0, 1))
are checked where they are read, in :mod:`xmlthresh.run.job` and :mod:`xmlthresh.run.protocols`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

#: the name of the schema in Hydra's ConfigStore (the first entry of config.yaml's defaults list)
SCHEMA_NAME = "xmlthresh_schema"


@dataclass
class CdeSettings:
    """``task=cde``: samples drawn per test point, points drawn, where densities are shown, the slice grid."""

    n_samples: int = 256
    n_plot_points: int = 3
    density_at_x: Optional[Any] = None
    slice_grid: int = 80
    save_per_point: bool = False


@dataclass
class ReportSettings:
    """The comparison page every sweep writes (``report.enabled``, on by default) and a study's own report
    (``report.kind``)."""

    enabled: bool = True
    title: str = "xmlthresh sweep"
    reference: str = "domain"
    metrics: List[str] = field(default_factory=list)
    kind: Optional[str] = None


@dataclass
class IntervalSettings:
    """The population interval of a fit on a split (``resamples`` > 0 turns it on)."""

    level: float = 0.9
    resamples: int = 0


@dataclass
class TrackingSettings:
    """MLflow tracking: on or off, the store, the experiment, and whether records are sent in the background."""

    enabled: bool = True
    uri: Optional[str] = None
    experiment: str = "xmlthresh"
    sync: str = "background"


@dataclass
class XmlthreshConfig:
    """Every top-level key of the primary config (see the comments of ``xmlthresh/conf/config.yaml``)."""

    strategy: Dict[str, Any] = field(default_factory=dict)
    dataset: Dict[str, Any] = field(default_factory=dict)
    protocol: Dict[str, Any] = field(default_factory=dict)
    ranker: Optional[Dict[str, Any]] = None
    estimator: Dict[str, Any] = field(default_factory=dict)
    cde_dataset: Dict[str, Any] = field(default_factory=dict)
    #: checked by the job, whose message says the allowed range and the fix (a type error would not)
    seed: Any = 0
    task: str = "thresholds"
    cde: CdeSettings = field(default_factory=CdeSettings)
    #: checked by the job: a number in [1e-06, 1e+06], said with what beta means
    beta: Any = 1.0
    plots: Any = "auto"
    figures: List[Any] = field(default_factory=list)
    plot_labels: Optional[Any] = None
    ceiling: bool = False
    achievable: bool = False
    warm_up: bool = True
    report: ReportSettings = field(default_factory=ReportSettings)
    interval: IntervalSettings = field(default_factory=IntervalSettings)
    force: bool = False
    tracking: TrackingSettings = field(default_factory=TrackingSettings)


def register_schema() -> None:
    """Put the schema into Hydra's ConfigStore (idempotent: storing it again replaces it). Its keys keep their
    types, but it is open to new ones, so that a user's ``conf/`` folder can add an option group of its own
    (the command line still refuses a key that no file declares)."""
    from hydra.core.config_store import ConfigStore
    from omegaconf import OmegaConf

    node = OmegaConf.structured(XmlthreshConfig)
    OmegaConf.set_struct(node, False)
    ConfigStore.instance().store(name=SCHEMA_NAME, node=node)



def bool_keys(schema: type = XmlthreshConfig, prefix: str = "") -> set[str]:
    """The dotted keys of the schema's switches (``warm_up``, ``tracking.enabled``, ...)."""
    found: set[str] = set()
    for item in fields(schema):
        if item.type in (bool, "bool"):
            found.add(prefix + item.name)
        elif isinstance(item.default_factory, type) and hasattr(item.default_factory, "__dataclass_fields__"):
            found |= bool_keys(item.default_factory, f"{prefix}{item.name}.")
    return found


def switch_override_problem(args: Iterable[str]) -> str | None:
    """The one-line problem with the first command-line value of a switch that is not a bool word or 0/1
    (OmegaConf takes any integer for a bool: ``warm_up=2`` meant true), or None. Every value of a sweep
    (``force=true,2``) is checked; values Hydra computes (``choice(...)``, interpolations) are left to it."""
    from xmlthresh._util.typed_params import FALSE_WORDS, TRUE_WORDS

    switches = bool_keys()
    allowed = TRUE_WORDS | FALSE_WORDS | {"0", "1"}
    for arg in args:
        key, sep, value = arg.lstrip("+").partition("=")
        if not sep or key not in switches or any(c in value for c in "()[]{}$'\""):
            continue
        for word in value.split(","):
            if word.strip().lower() not in allowed:
                return f"{key} must be true or false (yes/no, on/off, 1/0), got {word!r}"
    return None


def unknown_top_level_keys(keys: Iterable[str]) -> list[str]:
    """The top-level keys of a composed config that neither the schema nor an option group declares
    (``+tpyo=1`` was accepted and ignored): a group folder of the package, the user's ``conf/`` or a plugin
    counts as declared, so that a user's own group still composes."""
    from xmlthresh._util.paths import config_search_dirs

    package_conf = Path(__file__).resolve().parents[1] / "conf"
    groups = {folder.name for root in [package_conf, *config_search_dirs()] if root.is_dir()
              for folder in root.iterdir() if folder.is_dir()}
    known = {item.name for item in fields(XmlthreshConfig)} | groups | {"hydra"}
    return sorted(key for key in keys if key not in known)
