"""Feature data -> a ranker's scores, cached: ``ranker_scores(data, ranker_name, params, seed)``.

The ranker is fitted on the ``train`` split only (the loaders carve ``validation`` out of train) and scores
``validation`` and ``test``. The result is cached in ``cache_dir()/scores/`` (``$XMLTHRESH_CACHE``) under a
key of (data set name, fingerprint of the data: every split's array shapes and a hash of their contents,
ranker name, the ranker's full parameters, seed, cache format), written atomically in the score-file format
(:mod:`xmlthresh.data.score_format`) by :mod:`.score_cache`, so a sweep over threshold strategies fits the
ranker once.
A cache hit is logged ("scores from cache ...") and marked ``info["scores_from_cache"] = True``.

``info`` also holds the ranker's quality on test (P@1, P@3, P@5 and the ranking loss, over the documents
with at least one label) and its fit (wall and CPU) and prediction seconds (of the run that fitted it).
:mod:`xmlthresh.rankers.crossfit` builds cross-fitted scores on the same key, path and file helpers
(:mod:`.score_cache`).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh._util.files import jsonable
from xmlthresh._util.locks import cache_lock
from xmlthresh._util.registry import constructor_parameters
from xmlthresh.rankers.base import Ranker
from xmlthresh.rankers.quality import precision_at_k, ranking_loss
from xmlthresh.rankers.registry import RANKERS
from xmlthresh.rankers.score_cache import cache_key, cache_path, cache_usable, read_cache, store_scores

log = logging.getLogger(__name__)

#: the splits that are scored (when present); the ranker always fits on "train"
SCORED_SPLITS = ("validation", "test")


def make_ranker(ranker_name: str, params: Mapping[str, Any] | None = None, seed: int | None = None) -> Ranker:
    """The registered ranker with ``params`` (checked by the registry's builder); ``seed`` goes to its
    ``random_state`` when it has one and ``params`` do not set it. A ``name`` entry equal to ``ranker_name``
    (as in ``xmlthresh/conf/ranker/<name>.yaml``) is ignored. A missing dependency is reported when the
    ranker is fitted (``check_available``), so that its parameters can be inspected anywhere."""
    params = dict(params or {})
    if params.get("name", ranker_name) != ranker_name:
        raise ValueError(f"params name {params['name']!r} differs from ranker_name {ranker_name!r}")
    params.pop("name", None)
    accepted, _ = constructor_parameters(RANKERS.get(ranker_name))
    if "random_state" in accepted and "random_state" not in params:
        params["random_state"] = seed
    return RANKERS.build(ranker_name, params, check_available=False)


def ranker_scores(data: MultiLabelData, ranker_name: str, params: Mapping[str, Any] | None = None,
                  seed: int = 0, cache: bool = True) -> ScoreData:
    """Fit ``ranker_name`` on ``data``'s train split; scores of validation and test (cached, see module)."""
    ranker = make_ranker(ranker_name, params, seed)
    type(ranker).check_available()
    for required in ("train", "test"):
        if required not in data.X:
            raise ValueError(f"{data.name}: ranker scores need a {required!r} split, got {sorted(data.X)}")
    key = cache_key(data, ranker_name, ranker.get_params(), seed, scores_version=type(ranker).scores_version)
    path = cache_path(data.name, ranker_name, key)
    cache = cache_usable(path, cache)
    with cache_lock(path, enabled=cache):  # one worker fits, the others wait and read the cache
        if cache and path.is_file():
            cached = read_cache(path, key, data.name)
            if cached is not None:
                log.info("scores from cache %s (dataset %s, ranker %s)", path, data.name, ranker_name)
                return cached.with_native_threshold(type(ranker).native_threshold)

        log.info("fitting ranker %s on %s (%d train documents, %d labels)", ranker_name, data.name,
                 data.X["train"].shape[0], data.n_labels)
        started, cpu_started = time.perf_counter(), time.process_time()
        ranker.fit(data.X["train"], data.Y["train"])
        fit_seconds, fit_cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        started = time.perf_counter()
        splits = {
            split: ScoredSplit(ranker.predict_scores(data.X[split]), data.Y[split], name=f"{data.name}/{split}",
                               label_names=data.label_names, native_threshold=type(ranker).native_threshold)
            for split in SCORED_SPLITS if split in data.X
        }
        predict_seconds = time.perf_counter() - started
        test = splits["test"]
        quality = ranker_quality(test.scores, test.labels)
        info = ranker_info(ranker_name, ranker, seed, quality, fit_seconds, fit_cpu_seconds, predict_seconds,
                           int(data.X["train"].shape[0]), key)
        log.info("ranker %s on %s: P@1 %.4f, P@3 %.4f, P@5 %.4f, ranking loss %.4f (fit %.2f s)", ranker_name,
                 data.name, quality["p_at_1"], quality["p_at_3"], quality["p_at_5"], quality["ranking_loss"], fit_seconds)
        result = ScoreData(data.name, splits, info)
        if cache:
            store_scores(path, result)
        return result


def ranker_info(ranker_name: str, ranker: Ranker, seed: int, quality: Mapping[str, float], fit_seconds: float,
                fit_cpu_seconds: float, predict_seconds: float, train_docs: int, key: str) -> dict[str, Any]:
    """The facts about a fitted ranker that go with its cached scores (and into every run's result)."""
    return {
        "ranker": ranker_name,
        "ranker_params": jsonable(ranker.get_params()),
        "seed": seed,
        **{f"ranker_{name}": value for name, value in quality.items()},
        "ranker_fit_seconds": fit_seconds,
        "ranker_fit_cpu_seconds": fit_cpu_seconds,
        "ranker_predict_seconds": predict_seconds,
        "ranker_train_docs": train_docs,
        "cache_key": key,
        "scores_from_cache": False,
    }


def ranker_quality(scores: np.ndarray | sp.csr_matrix, labels: sp.csr_matrix) -> dict[str, float]:
    """P@1, P@3, P@5 and the ranking loss (documents with at least one label), plus how many such documents."""
    precision = precision_at_k(scores, labels, (1, 3, 5))
    return {
        "p_at_1": precision[1],
        "p_at_3": precision[3],
        "p_at_5": precision[5],
        "ranking_loss": ranking_loss(scores, labels),
        "eval_docs": int(np.count_nonzero(np.diff(sp.csr_matrix(labels).indptr) > 0)),
    }
