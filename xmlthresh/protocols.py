"""Protocols: on which data thresholds are fitted and on which they are evaluated.

* ``oracle`` -- fit and evaluate on the same data (the reference work's empirical setting: how good can
  thresholds be at best). Ranked lists: all of them; score data: the test split. Certified bounds apply to
  the reported numbers.
* ``holdout`` -- the practical setting: fit on the validation split, apply the score thresholds to the test
  split and report test metrics. Ranked lists have no splits: every label's documents are split at random
  (seeded) into fit and eval halves (:mod:`xmlthresh.data.holdout`). Bounds certify the fit data only and
  are reported as ``fit_lower_bound`` / ``fit_upper_bound``.

Either way the result holds the metrics of the evaluation data at the top level and, for holdout, the same
numbers on the fit data with the prefix ``fit_``. ``fit_seconds`` times the strategy's fit alone (not the
split of the data nor the evaluation).
"""

from __future__ import annotations

import time
from typing import Any

from .data.holdout import split_ranked_lists
from .data.multilabel import ScoreData
from .data.ranked_lists import RankedLists
from .metrics import evaluate_cuts
from .strategies.base import BaseStrategy

PROTOCOLS = ("oracle", "holdout")


class ProtocolError(ValueError):
    """A protocol that cannot run on the given data (e.g. holdout without a validation split)."""


def fit_and_evaluate(strategy: BaseStrategy, data: RankedLists | ScoreData, protocol: str = "oracle",
                     seed: int = 0) -> dict[str, Any]:
    """Fit ``strategy`` as the protocol says and return its evaluation (see module docstring). Whether
    "predict all" is a candidate is a property of the data (``include_predict_all`` of the lists or splits)."""
    if protocol not in PROTOCOLS:
        raise ProtocolError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    if isinstance(data, RankedLists):
        return _ranked_lists(strategy, data, protocol, seed)
    if isinstance(data, ScoreData):
        return _score_data(strategy, data, protocol)
    raise TypeError(f"cannot fit thresholds on {type(data).__name__}; expected RankedLists or ScoreData")


def _ranked_lists(strategy, lists: RankedLists, protocol: str, seed: int) -> dict[str, Any]:
    if protocol == "oracle":
        seconds = _timed(strategy.fit_lists, lists)
        report = strategy.report()
        return {**report, "protocol": protocol, "n_labels": int(lists.n_labels - strategy.n_labels_dropped_),
                "n_docs": int(lists.num_docs), "fit_seconds": seconds}
    halves = split_ranked_lists(lists, seed=seed)
    seconds = _timed(strategy.fit_lists, halves.fit)
    eval_cuts = halves.transfer_cuts(strategy.cuts_)
    kept = halves.eval.n_relevant > 0
    metrics = evaluate_cuts(halves.eval.select_labels(kept), eval_cuts[kept], strategy.beta)
    return {**_holdout_result(strategy, metrics, protocol, n_labels=int(kept.sum()), n_docs=halves.eval.num_docs),
            "fit_seconds": seconds}


def _score_data(strategy, data: ScoreData, protocol: str) -> dict[str, Any]:
    test = data.splits["test"]
    if protocol == "oracle":
        seconds = _timed(strategy.fit_scores, test)
        report = strategy.report()
        return {**report, "protocol": protocol, "n_labels": int((test.n_relevant > 0).sum()),
                "n_docs": int(test.n_docs), "eval_split": "test", "fit_seconds": seconds}
    if "validation" not in data.splits:
        raise ProtocolError(f"protocol=holdout needs a validation split; {data.name!r} has {sorted(data.splits)}")
    seconds = _timed(strategy.fit_scores, data.splits["validation"])
    metrics = strategy.evaluate_scores(test)
    result = _holdout_result(strategy, metrics, protocol, n_labels=int((test.n_relevant > 0).sum()),
                             n_docs=int(test.n_docs))
    return {**result, "fit_split": "validation", "eval_split": "test", "fit_seconds": seconds}


def _timed(fit, *args, **kwargs) -> float:
    started = time.perf_counter()
    fit(*args, **kwargs)
    return time.perf_counter() - started


def _holdout_result(strategy, metrics: dict, protocol: str, n_labels: int, n_docs: int) -> dict[str, Any]:
    fit_fields = {f"fit_{key}": value for key, value in strategy.report().items()}
    return {**metrics, "lower_bound": None, "upper_bound": None, **fit_fields, "protocol": protocol,
            "n_labels": n_labels, "n_docs": n_docs}
