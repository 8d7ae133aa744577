"""``task=thresholds``: load a data set, rank it when it has features, fit a strategy under a protocol, and
write what the fitted rule has (``thresholds.csv``, ``grid.csv``; the pictures are drawn by the job after
``result.json``) into the run directory.

Called by :func:`xmlthresh.run.job.run_job` inside its tracked run; every object is built from its config group
by the registries' one checked builder (:meth:`xmlthresh._util.registry.Registry.build`).
"""

from __future__ import annotations

import csv
import io
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.datasets import DATASETS
from xmlthresh._util.files import write_text_atomic
from xmlthresh.run.jit_notice import announce_compilation, compilation_done
from xmlthresh.run.protocols import ProtocolSpec, fit_and_evaluate, protocol_spec
from xmlthresh.run.references import achievable_f_macro, ceiling_f_macro
from xmlthresh._util.notices import IgnoredSettingWarning, warn
from xmlthresh._util.registry import ConfigError, constructor_defaults
from xmlthresh.config.seeds import loader_seeds, run_seed, seeds_used
from xmlthresh.strategies import STRATEGIES, BaseStrategy
from xmlthresh.strategies.fitted import FittedRule
from xmlthresh.tracking.mlflow_runs import flatten

log = logging.getLogger(__name__)

#: draws a run's pictures into its run directory and returns their paths
Pictures = Callable[[], list[Path]]


@dataclass(frozen=True)
class JobParts:
    """What a thresholds job is made of, built from its config and checked before any data is read."""

    strategy_name: str
    loader: str
    dataset_cfg: dict[str, Any]
    ranker_cfg: dict[str, Any]
    seed: int
    spec: ProtocolSpec
    dataset: Any
    strategy: BaseStrategy


def build_parts(cfg: Mapping[str, Any]) -> JobParts:
    """The job's seed, protocol, data set loader, strategy and ranker, each built by its registry's checked
    builder (a bad value raises here, with its message): what a run does before it reads data, and what a
    sweep checks for every value it varies before any job runs."""
    strategy_cfg = dict(cfg["strategy"])
    dataset_cfg = dict(cfg["dataset"])
    ranker_cfg = dict(cfg.get("ranker") or {})
    strategy_name = strategy_cfg.pop("name")
    loader = dataset_cfg.pop("loader", None) or dataset_cfg.get("name")
    seed = run_seed(cfg.get("seed", 0))
    spec = protocol_spec(cfg.get("protocol"), run_seed=seed)
    dataset = DATASETS.build(loader, dataset_cfg)
    strategy: BaseStrategy = STRATEGIES.build(strategy_name, {"beta": cfg.get("beta", 1.0), **strategy_cfg})
    if ranker_cfg.get("name"):  # its parameters checked now, not after the data set has loaded
        from xmlthresh.rankers.scoring import make_ranker

        make_ranker(str(ranker_cfg["name"]), {k: v for k, v in ranker_cfg.items() if k != "name"}, seed)
    return JobParts(strategy_name, loader, dataset_cfg, ranker_cfg, seed, spec, dataset, strategy)


def run_threshold_task(cfg: Mapping[str, Any], run_dir: Path, tracker: Any, base: dict[str, Any],
                       parallelism: dict[str, Any], draw: bool = True,
                       ranker_asked: bool = False, skip_allowed: bool = True) -> tuple[dict[str, Any], Pictures | None]:
    """Thresholds: load a data set, rank it when it has features, fit a strategy under a protocol.

    ``ranker_asked``: the command line chose the ranker (``ranker=...``), so a data set that is ranked
    already is worth a warning (the config's default ranker is not). ``skip_allowed``: a strategy that cannot
    fit this data (``pu`` on ranked lists) gives a result marked skipped (a sweep's job) instead of an error
    (a single run, which asked for exactly that). Returns the result and, when ``draw`` and the rule was fitted on ranked lists, the pictures to draw
    (a callable writing them into ``run_dir``): the job draws them after result.json is written."""
    # built inside the run: a configuration error is a FAILED run with its message, like any other
    parts = build_parts(cfg)
    strategy_name, loader, dataset_cfg, ranker_cfg = parts.strategy_name, parts.loader, parts.dataset_cfg, parts.ranker_cfg
    seed, spec, dataset, strategy = parts.seed, parts.spec, parts.dataset, parts.strategy
    protocol = spec.name
    beta = float(strategy.beta)
    tracker.log_params(
        {"strategy": strategy_name, "kind": strategy.kind, "dataset": dataset.name, "beta": beta,
         "protocol": protocol, "seed": seed, **flatten(spec.params(), "protocol."),
         **flatten(strategy.get_params(), "strategy."), **flatten(dataset_cfg, "dataset."),
         "dataset.loader": loader, **parallelism}
    )

    started = time.perf_counter()
    data = dataset.load()
    load_seconds = time.perf_counter() - started
    data_info: dict[str, Any] = {}
    split_seeds = loader_seeds(data, dataset)
    ranked_here = isinstance(data, MultiLabelData)
    if not ranked_here and ranker_cfg.get("name") and ranker_asked:  # ranked already: say so, and record it
        log.warning("ranker=%s is not used: data set %r is ranked already (%s); drop ranker= for it",
                    ranker_cfg["name"], dataset.name, type(data).__name__)
        data_info["ranker_ignored"] = str(ranker_cfg["name"])
    if ranked_here:
        data, ranker_name = _rank(data, ranker_cfg, seed, spec)
        data = data.with_predict_all(dataset.include_predict_all)
        data_info = {"ranker": ranker_name, **data.info}
        tracker.log_params({"ranker": ranker_name, **flatten(ranker_cfg, "ranker.")})
    seeds = seeds_used(seed, split_seeds, data, spec, ranked_here, strategy.get_params())
    tracker.log_params(flatten(seeds, "seeds."))

    base = {"strategy": strategy_name, "variant": strategy_variant(strategy_name, strategy), "kind": strategy.kind,
            "dataset": dataset.name, "beta": beta, "protocol": protocol, **spec.params(), "seed": seed, "seeds": seeds,
            "load_seconds": load_seconds, **data_info, **base}
    skipped, reason = strategy.skip(data)
    if skipped and not skip_allowed:  # one run asked for exactly this: it cannot be done
        raise ConfigError(f"{reason}; choose another strategy or data set (a sweep skips such combinations and goes "
                          "on)")
    if skipped:
        log.warning("skipped: %s", reason)
        tracker.set_tags({"skipped": reason})
        return {**base, "skipped": True, "skip_reason": reason}, None

    asked = [key for key in ("figures", "plot_labels") if cfg.get(key)]
    options = picture_options(cfg, _label_ids(data)) if draw or asked else {}  # checked before any fitting
    if asked and not draw:  # checked, and said: they draw nothing in this run
        warn(f"{' and '.join(asked)} draw nothing here: this run draws no pictures (plots="
             f"{cfg.get('plots', 'auto')}{', a sweep' if cfg.get('plots', 'auto') == 'auto' else ''}); set "
             "plots=true to draw them", IgnoredSettingWarning)
        options = {}
    warmup_seconds = 0.0
    if cfg.get("warm_up", True):
        started = time.perf_counter()
        first = announce_compilation()
        on_lists = isinstance(data, RankedLists)
        strategy.warm_up(lists=on_lists, scores=not on_lists)
        if first:
            compilation_done()
        warmup_seconds = time.perf_counter() - started
    log.info("fitting %s on %s (protocol %s)", strategy_name, dataset.name, protocol)
    evaluation = fit_and_evaluate(strategy, data, protocol=spec, interval=cfg.get("interval"))
    if dataset.population() is not None:  # a closed-form model (scipy.special only for those data sets)
        from xmlthresh.run.population_metrics import population_metrics

        evaluation.update(population_metrics(dataset, data, strategy, beta))
    asked = [key for key in ("ceiling", "achievable") if cfg.get(key, False)]
    if isinstance(data, ScoreData) and protocol != "oracle":
        if cfg.get("ceiling", False):
            evaluation["ceiling_f_macro"] = ceiling_f_macro(data.splits["test"], beta)
        if cfg.get("achievable", False):
            evaluation.update(achievable_f_macro(strategy, data.splits["test"], seed))
    elif asked:  # said and recorded, not silently dropped
        why = "ranked lists have no test split apart from the fit" if not isinstance(data, ScoreData) else \
            "protocol=oracle fits on the test split itself"
        log.warning("%s: not computed (%s); they compare a fit with the test split under protocol=holdout or "
                    "crossfit", ", ".join(f"{key}=true" for key in asked), why)
        evaluation["not_computed"] = {key: why for key in asked}
    fitted = strategy.fitted()
    for path in write_fitted(fitted, _label_ids(data), run_dir):
        tracker.log_artifact(path)
    pictures = None
    if draw and fitted.fit_lists is not None:
        pictures = lambda: _draw(fitted, run_dir, **options)  # noqa: E731
    return {**base, **evaluation, "warmup_seconds": warmup_seconds}, pictures


def write_fitted(fitted: FittedRule, label_ids: np.ndarray, run_dir: Path) -> list[Path]:
    """What the fitted rule has, written into ``run_dir``: ``thresholds.csv`` and ``grid.csv`` (a grid)."""
    paths = [run_dir / "thresholds.csv"]
    write_text_atomic(paths[0], thresholds_csv(fitted, label_ids))
    if fitted.grid is not None:
        paths.append(run_dir / "grid.csv")
        write_text_atomic(paths[-1], fitted.grid.to_csv(index=False))
    return paths


def _draw(fitted: FittedRule, run_dir: Path, **options: Any) -> list[Path]:
    """The pictures of a rule fitted on ranked lists, drawn from ``fitted`` (nothing is refitted)."""
    from xmlthresh.report.plots import save_run_plots  # matplotlib only for runs that draw

    return save_run_plots(fitted, run_dir, **options)


def picture_options(cfg: Mapping[str, Any], label_ids: np.ndarray) -> dict[str, Any]:
    """``figures`` (extra pictures by name) and ``plot_labels`` (label ids -> positions) of the config,
    checked before anything is drawn: an unknown name or label id is one line naming the accepted ones."""
    from xmlthresh.report.plots import EXTRA_FIGURES

    figures = cfg.get("figures") or []
    if isinstance(figures, str) or not all(isinstance(name, str) for name in figures):
        raise ConfigError(f"figures must be a list of names ({', '.join(EXTRA_FIGURES)}), got {figures!r}")
    unknown = [name for name in figures if name not in EXTRA_FIGURES]
    if unknown:
        raise ConfigError(f"unknown figure(s) {', '.join(unknown)}; known: {', '.join(EXTRA_FIGURES)}")
    labels = cfg.get("plot_labels")
    positions = None
    if labels is not None:
        if isinstance(labels, (str, int)) or not len(labels):
            raise ConfigError(f"plot_labels must be a non-empty list of label ids, got {labels!r}")
        as_text = np.array([str(label) for label in label_ids])
        wanted = [str(label) for label in labels]
        missing = [label for label in wanted if label not in set(as_text.tolist())]
        if missing:
            raise ConfigError(f"plot_labels: no label {', '.join(missing[:10])} in the data set "
                              f"(ids such as {', '.join(as_text[:5].tolist())})")
        position = {label: i for i, label in reversed(list(enumerate(as_text.tolist())))}
        positions = np.array([position[label] for label in wanted], dtype=np.int64)
    return {"figures": tuple(figures), "labels": positions}


def thresholds_csv(fitted: FittedRule, label_ids: np.ndarray) -> str:
    """``thresholds.csv``: one row per label with its id, the fitted cut (documents predicted on the fit data)
    and/or score threshold, and whether it was excluded (no relevant document). Written with the csv module
    in pandas' ``to_csv`` format (floats as ``repr``, ``inf``, ``True``/``False``; tested equal), so a run
    does not import pandas."""
    columns: list[tuple[str, Any]] = [("label_id", label_ids)]
    if fitted.cuts is not None and len(fitted.cuts) == len(label_ids):
        columns.append(("cut", fitted.cuts))
    if fitted.score_thresholds is not None:
        columns.append(("score_threshold", fitted.score_thresholds))
    columns.append(("excluded", ~fitted.kept_labels))
    arrays = [np.asarray(values) for _, values in columns]
    if all(array.dtype.kind in "biuf" for array in arrays):  # numbers only: no quoting, column-wise (283k labels)
        text = [np.where(array, "True", "False").tolist() if array.dtype.kind == "b" else
                list(map(repr if array.dtype.kind == "f" else str, array.tolist())) for array in arrays]
        return ",".join(name for name, _ in columns) + "\n" + "\n".join(map(",".join, zip(*text))) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([name for name, _ in columns])
    for row in zip(*[np.asarray(values).tolist() for _, values in columns]):
        writer.writerow([repr(value) if isinstance(value, float) else value for value in row])
    return out.getvalue()


def strategy_variant(name: str, strategy: BaseStrategy) -> str:
    """The strategy's name with the parameters that differ from its defaults (beta and seed aside), e.g.
    ``domain(smoothing=5.0)``: the label that tells variants of one strategy apart in a study."""
    defaults = constructor_defaults(type(strategy))
    changed = {key: value for key, value in strategy.get_params(deep=False).items()
               if key not in ("beta", "seed") and key in defaults and value != defaults[key]}
    return f"{name}({', '.join(f'{key}={value}' for key, value in sorted(changed.items()))})" if changed else name


def _rank(data: MultiLabelData, ranker_cfg: dict, seed: int, spec: ProtocolSpec) -> tuple[ScoreData, str]:
    """Scores of a first-stage ranker for a feature data set (cached by the ranker layer): fitted on train
    (validation and test scored), or under crossfit out-of-fold scores of train ∪ validation and a refit."""
    from xmlthresh.rankers import crossfit_scores, ranker_scores  # scikit-learn only for feature data sets

    params = dict(ranker_cfg)
    name = params.pop("name", None)
    if not name:
        raise ConfigError(f"data set {data.name!r} has features: choose a first-stage ranker, e.g. ranker=br_logreg")
    if spec.name == "crossfit":
        return crossfit_scores(data, name, params, seed, folds=spec.folds, fold_seed=spec.seed), name
    return ranker_scores(data, name, params, seed), name


def _label_ids(data: RankedLists | ScoreData) -> np.ndarray:
    if isinstance(data, RankedLists):
        return data.label_ids
    names = data.splits["test"].label_names
    return names if names is not None else np.arange(data.splits["test"].n_labels)
