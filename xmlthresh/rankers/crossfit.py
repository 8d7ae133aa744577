"""Cross-fitted ranker scores (``protocol=crossfit``): out-of-fold scores of every training document.

Thresholds fitted on a validation split transfer poorly when that split is small (25 % of train by default).
Cross-fitting uses every training document instead:

1. the training documents are ``train`` joined with ``validation`` (:meth:`MultiLabelData.training_union`);
2. they are cut into ``folds`` shuffled folds (:func:`xmlthresh.data.folds.kfold_assignment`, seed
   ``fold_seed``); for each fold the ranker is fitted on the other folds and scores the fold's documents --
   together the *out-of-fold* scores of all training documents, each from a model that never saw it;
3. the ranker is refitted on all training documents and scores ``test``.

``crossfit_scores`` returns :class:`ScoreData` whose ``validation`` split holds the out-of-fold scores (all
training documents, so thresholds are fitted on them exactly as holdout fits on validation) and whose
``test`` split holds the refitted ranker's scores. That is ``folds + 1`` ranker fits; the result is cached
like :func:`~xmlthresh.rankers.scoring.ranker_scores` (same directory and file layout), under a key that
also holds the folds and their seed, so a sweep over threshold strategies fits the ranker ``folds + 1``
times once per (data set, ranker, seed).

``info`` holds what ``ranker_scores`` reports (test quality, fit seconds -- here the wall and CPU time of all
``folds + 1`` fits) plus ``out_of_fold``: the folds, their seed, the out-of-fold quality and the fold sizes.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from xmlthresh.data.folds import check_folds, kfold_assignment
from xmlthresh.data.multilabel import MultiLabelData, ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh._util.locks import cache_lock
from xmlthresh.rankers.base import Ranker
from xmlthresh.rankers.score_cache import cache_key, cache_path, cache_usable, read_cache, store_scores
from xmlthresh.rankers.scoring import make_ranker, ranker_info, ranker_quality

log = logging.getLogger(__name__)


def crossfit_scores(data: MultiLabelData, ranker_name: str, params: Mapping[str, Any] | None = None,
                    seed: int = 0, folds: int = 5, fold_seed: int = 0, cache: bool = True) -> ScoreData:
    """Out-of-fold scores of ``train`` ∪ ``validation`` and refitted scores of ``test`` (see module)."""
    ranker = make_ranker(ranker_name, params, seed)
    type(ranker).check_available()
    for required in ("train", "test"):
        if required not in data.X:
            raise ValueError(f"{data.name}: cross-fitted scores need a {required!r} split, got {sorted(data.X)}")
    whole = data.training_union()
    X, Y = whole.X["train"], whole.Y["train"]
    n_docs = X.shape[0]
    folds = check_folds(folds, n_docs)
    extra = {"crossfit": {"folds": folds, "fold_seed": int(fold_seed)}}
    key = cache_key(whole, ranker_name, ranker.get_params(), seed, extra=extra,
                    scores_version=type(ranker).scores_version)
    path = cache_path(data.name, ranker_name, key, kind=f"crossfit{folds}")
    cache = cache_usable(path, cache)
    with cache_lock(path, enabled=cache):  # one worker fits, the others wait and read the cache
        if cache and path.is_file():
            cached = read_cache(path, key, data.name)
            if cached is not None:
                log.info("cross-fitted scores from cache %s (dataset %s, ranker %s, %d folds)", path, data.name,
                         ranker_name, folds)
                return cached.with_native_threshold(type(ranker).native_threshold)

        fold_of = kfold_assignment(n_docs, folds, fold_seed)
        log.info("cross-fitting ranker %s on %s: %d folds of %d training documents, then a refit on all", ranker_name,
                 data.name, folds, n_docs)
        started, cpu_started = time.perf_counter(), time.process_time()
        oof = out_of_fold_scores(ranker, X, Y, fold_of)
        oof_seconds = time.perf_counter() - started
        final = clone(ranker).fit(X, Y)
        fit_seconds, fit_cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        started = time.perf_counter()
        test_scores = final.predict_scores(data.X["test"])
        predict_seconds = time.perf_counter() - started

        native = type(ranker).native_threshold
        splits = {"validation": ScoredSplit(oof, Y, name=f"{data.name}/out-of-fold", label_names=data.label_names,
                                            native_threshold=native),
                  "test": ScoredSplit(test_scores, data.Y["test"], name=f"{data.name}/test",
                                      label_names=data.label_names, native_threshold=native)}
        quality = ranker_quality(splits["test"].scores, splits["test"].labels)
        oof_quality = ranker_quality(splits["validation"].scores, splits["validation"].labels)
        info = {
            **ranker_info(ranker_name, ranker, seed, quality, fit_seconds, fit_cpu_seconds, predict_seconds,
                          int(n_docs), key),
            "ranker_fold_fit_seconds": oof_seconds,
            "out_of_fold": {"folds": folds, "fold_seed": int(fold_seed),
                            "fold_sizes": np.bincount(fold_of, minlength=folds).tolist(),
                            "training_splits": whole.info.get("training_union", {"train": int(n_docs)}),
                            **{f"p_at_{k}": oof_quality[f"p_at_{k}"] for k in (1, 3, 5)},
                            "ranking_loss": oof_quality["ranking_loss"]},
        }
        log.info("cross-fitted %s on %s: out-of-fold P@1 %.4f, test P@1 %.4f (%d fits, %.2f s)", ranker_name, data.name,
                 oof_quality["p_at_1"], quality["p_at_1"], folds + 1, fit_seconds)
        result = ScoreData(data.name, splits, info)
        if cache:
            store_scores(path, result)
        return result


def out_of_fold_scores(ranker: Ranker, X: np.ndarray | sp.csr_matrix, Y: sp.csr_matrix,
                       fold_of: np.ndarray) -> np.ndarray | sp.csr_matrix:
    """Scores of every document from a clone of ``ranker`` fitted on the documents of the other folds.

    Dense when the ranker gives dense scores, else CSR; rows in the documents' order."""
    folds = int(fold_of.max()) + 1
    rows = [np.flatnonzero(fold_of == f) for f in range(folds)]  # one entry per fold, not per document
    blocks = []
    for fold, held_out in enumerate(rows):
        training = fold_of != fold
        model = clone(ranker).fit(X[training], Y[training])
        blocks.append(model.predict_scores(X[held_out]))
    order = np.concatenate(rows)
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    if any(sp.issparse(block) for block in blocks):
        return sp.vstack([sp.csr_matrix(block) for block in blocks], format="csr")[back]
    return np.vstack(blocks)[back]
