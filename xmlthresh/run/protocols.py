"""Protocols: on which data thresholds are fitted and on which they are evaluated.

* ``oracle`` -- fit and evaluate on the same data (the reference work's empirical setting: how good can
  thresholds be at best). Ranked lists: all of them; score data: the test split. Certified bounds apply to
  the reported numbers.
* ``holdout`` -- the practical setting: fit on the validation split, apply the score thresholds to the test
  split and report test metrics. Ranked lists have no splits: every label's documents are split at random
  (seeded) into fit and eval halves (:mod:`xmlthresh.data.holdout`). Bounds certify the fit data only and
  are reported as ``fit_lower_bound`` / ``fit_upper_bound``.

* ``crossfit`` -- holdout without wasting training documents: the ranker is fitted ``folds`` times on k-1
  folds of train ∪ validation, the thresholds are fitted on the out-of-fold scores of *all* training
  documents, and the ranker refitted on all of them scores test (:mod:`xmlthresh.rankers.crossfit`, done
  before this module sees the data: it arrives as score data whose ``validation`` split is out-of-fold).
  Score data that did not come from a ranker here (score files, ``synthetic_xmc``) has no ranker to refit:
  its ``validation`` split is *taken as* the out-of-fold scores (fit on validation, evaluate on test, as
  holdout does; the result says ``out_of_fold: "given"`` and a warning is logged). Ranked lists carry no
  features and no document identity across labels: crossfit on them is an error (use holdout).

Either way the result holds the metrics of the evaluation data at the top level and, for holdout and
crossfit, the same numbers on the fit data with the prefix ``fit_``. ``fit_seconds`` times the strategy's
fit alone (not the split of the data nor the evaluation). On score data, holdout and crossfit also count the
labels without a relevant document in the fit split (:func:`labels_without_fit_positive`).

A protocol is configured by the ``protocol`` config group (``conf/protocol/<name>.yaml``: ``name`` and its
parameters) or, in plain configs, by its name; :func:`protocol_spec` checks either strictly.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from xmlthresh.data.folds import check_folds
from xmlthresh.data.holdout import split_ranked_lists
from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.evaluation import evaluate_cuts
from xmlthresh.strategies.base import BaseStrategy
from xmlthresh.config.seeds import MAX_SEED

log = logging.getLogger(__name__)

PROTOCOLS = ("oracle", "holdout", "crossfit")
#: the parameters each protocol takes besides ``name`` (the keys of ``conf/protocol/<name>.yaml``)
PARAMETERS: dict[str, tuple[str, ...]] = {"oracle": (), "holdout": ("seed",), "crossfit": ("folds", "seed")}
DEFAULT_FOLDS = 5


class ProtocolError(ValueError):
    """A protocol that cannot run on the given data (e.g. holdout without a validation split)."""


@dataclass(frozen=True)
class ProtocolSpec:
    """A checked protocol: its name, the seed of its random choices (holdout: the halves of ranked lists;
    crossfit: the folds) and, for crossfit, the number of folds."""

    name: str
    seed: int = 0
    folds: int | None = None

    def params(self) -> dict[str, Any]:
        """The protocol's own parameters besides name and seed (logged as ``protocol.<key>``)."""
        return {"folds": self.folds} if self.name == "crossfit" else {}


def protocol_spec(value: str | Mapping[str, Any] | ProtocolSpec | None, run_seed: int = 0) -> ProtocolSpec:
    """The protocol of a config: a name (``"holdout"``) or a ``protocol`` group node (``{"name": "crossfit",
    "folds": 5, "seed": 0}``). A missing ``seed`` is ``run_seed``; a missing ``folds`` is 5.

    Strict: an unknown name or parameter, a non-integer seed or folds (``4.5``, ``true``, ``"5"``) and
    ``folds < 2`` are one-line :class:`ProtocolError` messages, never truncated or converted."""
    if isinstance(value, ProtocolSpec):
        return value
    if value is None:
        value = "oracle"
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping):
        raise ProtocolError(f"protocol must be a name ({', '.join(PROTOCOLS)}) or a mapping with 'name', got "
                            f"{value!r}")
    params = dict(value)
    name = params.pop("name", None)
    if not isinstance(name, str) or name not in PROTOCOLS:
        raise ProtocolError(f"unknown protocol {name!r}; known: {', '.join(PROTOCOLS)}")
    unknown = sorted(set(params) - set(PARAMETERS[name]))
    if unknown:
        accepted = ", ".join(("name",) + PARAMETERS[name])
        raise ProtocolError(f"protocol {name!r} has no parameter(s) {', '.join(map(str, unknown))}; its parameters: "
                            f"{accepted}")
    seed = params.get("seed", run_seed)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ProtocolError(f"protocol.seed must be an integer, got {seed!r} ({type(seed).__name__})")
    if not 0 <= seed <= MAX_SEED:  # the halves' generator takes 32 bits: -1 and 2**32 wrapped onto other seeds
        raise ProtocolError(f"protocol.seed must be an integer in [0, {MAX_SEED}], got {seed}")
    folds = None
    if name == "crossfit":
        try:
            folds = check_folds(params.get("folds", DEFAULT_FOLDS))
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None
    return ProtocolSpec(name=name, seed=int(seed), folds=folds)


def fit_and_evaluate(strategy: BaseStrategy, data: RankedLists | ScoreData,
                     protocol: str | Mapping[str, Any] | ProtocolSpec = "oracle", seed: int = 0,
                     interval: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fit ``strategy`` as the protocol says and return its evaluation (see module docstring).

    ``seed`` is the protocol's seed when ``protocol`` does not give one (a plain name). Whether "predict all"
    is a candidate is a property of the data (``include_predict_all`` of the lists or splits).
    ``interval`` (``level``, ``resamples``; none without it or with ``resamples: 0``): a fit on a split of
    scores (holdout, crossfit) also reports ``f_macro_interval``, the interval of :mod:`xmlthresh.strategies.interval` for
    the F-macro of its thresholds on new documents, from the fit split alone, resampled by the protocol's seed."""
    spec = protocol_spec(protocol, run_seed=seed)
    wanted = _interval_wanted(interval)  # checked before the fit, for every kind of data
    if isinstance(data, RankedLists):
        if wanted:  # said and recorded, not silently dropped
            log.warning("interval.resamples=%s: the population interval needs a split of scores (score data under "
                        "holdout or crossfit); ranked lists get none", (interval or {}).get("resamples"))
            return {**_ranked_lists(strategy, data, spec), "interval_not_computed": "ranked lists"}
        return _ranked_lists(strategy, data, spec)
    if isinstance(data, ScoreData):
        return _score_data(strategy, data, spec, interval)
    raise TypeError(f"cannot fit thresholds on {type(data).__name__}; expected RankedLists or ScoreData")


def _ranked_lists(strategy, lists: RankedLists, spec: ProtocolSpec) -> dict[str, Any]:
    protocol = spec.name
    if protocol == "crossfit":
        raise ProtocolError(f"protocol=crossfit refits a ranker on k-1 folds of the training documents, but "
                            f"{lists.name!r} is ranked lists (no features, no ranker): use protocol=holdout")
    if protocol == "oracle":
        seconds = _timed(strategy.fit_lists, lists)
        report = strategy.report()
        return {**report, "protocol": protocol, "n_labels": int(lists.n_labels - strategy.n_labels_dropped_),
                "n_docs": int(lists.num_docs), "fit_seconds": seconds}
    halves = split_ranked_lists(lists, seed=spec.seed)
    seconds = _timed(strategy.fit_lists, halves.fit)
    eval_cuts = halves.transfer_cuts(strategy.cuts_)
    kept = halves.eval.n_relevant > 0
    metrics = evaluate_cuts(halves.eval.select_labels(kept), eval_cuts[kept], strategy.beta)
    return {**_holdout_result(strategy, metrics, protocol, n_labels=int(kept.sum()), n_docs=halves.eval.num_docs),
            "fit_seconds": seconds}


def _score_data(strategy, data: ScoreData, spec: ProtocolSpec, interval: Mapping[str, Any] | None = None
                ) -> dict[str, Any]:
    protocol = spec.name
    test = data.splits["test"]
    if protocol == "oracle":
        if _interval_wanted(interval):  # said, as for ranked lists (exit 0 without a word before)
            log.warning("interval.resamples=%s: the population interval is of thresholds fitted on one split and "
                        "applied to new documents; protocol=oracle fits and scores the same documents, so it gets "
                        "none (use protocol=holdout or crossfit)", (interval or {}).get("resamples"))
        seconds = _timed(strategy.fit_scores, test)
        report = strategy.report()
        return {**report, "protocol": protocol, "n_labels": int((test.n_relevant > 0).sum()),
                "n_docs": int(test.n_docs), "eval_split": "test", "native_threshold": test.native_threshold,
                "fit_seconds": seconds}
    if "validation" not in data.splits:
        what = "a validation split" if protocol == "holdout" else "features (to cross-fit a ranker) or a validation split"
        raise ProtocolError(f"protocol={protocol} needs {what}; {data.name!r} has {sorted(data.splits)}")
    fit = data.splits["validation"]
    seconds = _timed(strategy.fit_scores, fit)
    metrics = strategy.evaluate_scores(test)
    result = _holdout_result(strategy, metrics, protocol, n_labels=int((test.n_relevant > 0).sum()),
                             n_docs=int(test.n_docs))
    fields: dict[str, Any] = {"fit_split": "validation", "eval_split": "test", "fit_n_docs": int(fit.n_docs),
                              "native_threshold": fit.native_threshold,
                              **labels_without_fit_positive(fit, test)}
    if protocol == "crossfit":
        out_of_fold = data.info.get("out_of_fold")
        if isinstance(out_of_fold, Mapping):
            fields.update(fit_split="out_of_fold", folds=int(out_of_fold["folds"]))
        else:
            log.warning("protocol=crossfit on the given scores of %r: there is no ranker to refit, so its validation "
                        "split is taken as the out-of-fold scores (fit on validation, evaluate on test)", data.name)
            fields.update(out_of_fold="given")
    fields.update(_interval(strategy, fit, spec, interval, new_documents=int(test.n_docs)))
    return {**result, **fields, "fit_seconds": seconds}


def _interval_wanted(interval: Mapping[str, Any] | None) -> bool:
    """Whether ``interval`` asks for the population interval (``resamples`` > 0), its settings checked (a level
    of 1.5 passed without a word on ranked lists, and on scores only after the fit)."""
    from xmlthresh.strategies.interval import DEFAULT_LEVEL, check_interval

    settings = dict(interval or {})
    if settings.get("resamples", 0) == 0:
        return False
    try:
        check_interval(settings.get("level", DEFAULT_LEVEL), settings.get("resamples"))
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    return True


def _interval(strategy, fit, spec: ProtocolSpec, interval: Mapping[str, Any] | None,
              new_documents: int) -> dict[str, Any]:
    """The population interval of the fitted thresholds on ``new_documents`` new documents (the size of the
    evaluation split: its labels are not used), with its ends as numbers too (``f_macro_interval_low`` /
    ``_high``: what MLflow can show)."""
    from xmlthresh.strategies.interval import DEFAULT_LEVEL, check_interval, out_of_bootstrap_interval

    settings = dict(interval or {})
    resamples = settings.get("resamples", 0)
    if resamples == 0:
        return {}
    try:
        level, resamples = check_interval(settings.get("level", DEFAULT_LEVEL), resamples)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None
    started = time.perf_counter()
    found = out_of_bootstrap_interval(strategy, fit, level, resamples, seed=spec.seed, apparent=strategy.f_macro_,
                                      new_documents=new_documents)
    ends = found["f_macro_interval"] or [None, None]
    return {**found, "f_macro_interval_low": ends[0], "f_macro_interval_high": ends[1],
            "interval_seconds": time.perf_counter() - started}


def labels_without_fit_positive(fit, test) -> dict[str, int]:
    """How many labels have no relevant document in the fit split: ``fit_labels_without_positive`` counts
    them among all labels, ``eval_labels_without_fit_positive`` among the evaluated ones (relevant in test),
    where the fitted thresholds saw no positive of a label the metrics score."""
    unseen = np.asarray(fit.n_relevant) == 0
    return {"fit_labels_without_positive": int(unseen.sum()),
            "eval_labels_without_fit_positive": int((unseen & (np.asarray(test.n_relevant) > 0)).sum())}


def _timed(fit, *args, **kwargs) -> float:
    started = time.perf_counter()
    fit(*args, **kwargs)
    return time.perf_counter() - started


def _holdout_result(strategy, metrics: dict, protocol: str, n_labels: int, n_docs: int) -> dict[str, Any]:
    fit_fields = {f"fit_{key}": value for key, value in strategy.report().items()}
    return {**metrics, "lower_bound": None, "upper_bound": None, **fit_fields, "protocol": protocol,
            "n_labels": n_labels, "n_docs": n_docs}
