"""Cross-fitted ranker scores: out-of-fold scores of train ∪ validation from models that never saw the
document, a refit for test, and the cache (keyed by folds and their seed)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

from xmlthresh.data.folds import kfold_assignment
from xmlthresh.data.multilabel import MultiLabelData
from xmlthresh.rankers import RANKERS, crossfit_scores, make_ranker, out_of_fold_scores, ranker_quality


def make_data(seed: int = 0, n_train: int = 120, n_validation: int = 40, n_test: int = 60) -> MultiLabelData:
    X, Y = make_multilabel_classification(n_samples=n_train + n_validation + n_test, n_features=12, n_classes=6,
                                          n_labels=2, random_state=seed)
    bounds = np.cumsum([0, n_train, n_validation, n_test])
    parts = {split: slice(bounds[i], bounds[i + 1]) for i, split in enumerate(("train", "validation", "test"))}
    return MultiLabelData(f"toy{seed}", {s: X[p].astype(float) for s, p in parts.items()},
                          {s: sp.csr_matrix(Y[p].astype(bool)) for s, p in parts.items()},
                          np.array([f"L{k}" for k in range(6)]))


# ------------------------------------------------------------------------------------ out-of-fold scores
@pytest.mark.parametrize("top_k", [None, 3])
def test_out_of_fold_scores_come_from_models_that_never_saw_the_document(top_k):
    data = make_data()
    X, Y = data.X["train"], data.Y["train"]
    fold_of = kfold_assignment(X.shape[0], 4, seed=1)
    ranker = make_ranker("knn", {"k": 5, "top_k": top_k})
    scores = out_of_fold_scores(ranker, X, Y, fold_of)
    assert sp.issparse(scores) == (top_k is not None) and scores.shape == Y.shape
    for fold in range(4):
        rows = fold_of == fold
        expected = make_ranker("knn", {"k": 5, "top_k": top_k}).fit(X[~rows], Y[~rows]).predict_scores(X[rows])
        got = scores[np.flatnonzero(rows)]
        if top_k is None:
            np.testing.assert_array_equal(got, expected)
        else:
            assert (got != expected).nnz == 0


def test_out_of_fold_scores_do_not_leak_the_document_itself():
    """1-nearest-neighbour scores in-sample are the document's own labels (P@1 = 1); out of fold they are not."""
    data = make_data()
    X, Y = data.X["train"], data.Y["train"]
    in_sample = make_ranker("knn", {"k": 1}).fit(X, Y).predict_scores(X)
    assert ranker_quality(in_sample, Y)["p_at_1"] == 1.0
    out_of_fold = out_of_fold_scores(make_ranker("knn", {"k": 1}), X, Y, kfold_assignment(X.shape[0], 5, seed=0))
    assert ranker_quality(out_of_fold, Y)["p_at_1"] < 0.9


def test_crossfit_scores_cover_train_and_validation_and_refit_for_test(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    data = make_data()
    result = crossfit_scores(data, "knn", {"k": 5}, seed=0, folds=4, fold_seed=2)
    assert set(result.splits) == {"validation", "test"}
    out_of_fold = result.splits["validation"]
    assert out_of_fold.n_docs == 160  # train + validation
    assert (out_of_fold.labels != sp.vstack([data.Y["train"], data.Y["validation"]])).nnz == 0
    X_all = np.vstack([data.X["train"], data.X["validation"]])
    np.testing.assert_array_equal(out_of_fold.scores, out_of_fold_scores(
        make_ranker("knn", {"k": 5}), X_all, out_of_fold.labels, kfold_assignment(160, 4, seed=2)))
    refit = make_ranker("knn", {"k": 5}).fit(X_all, out_of_fold.labels).predict_scores(data.X["test"])
    np.testing.assert_array_equal(result.splits["test"].scores, refit)
    info = result.info
    assert info["out_of_fold"]["folds"] == 4 and info["out_of_fold"]["fold_seed"] == 2
    assert info["out_of_fold"]["fold_sizes"] == [40, 40, 40, 40]
    assert info["out_of_fold"]["training_splits"] == {"train": 120, "validation": 40}
    assert info["ranker_train_docs"] == 160 and info["ranker_fit_cpu_seconds"] >= 0


def test_crossfit_scores_are_cached_under_folds_and_seeds(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    data = make_data()
    fits = []
    original = RANKERS.get("knn").fit
    monkeypatch.setattr(RANKERS.get("knn"), "fit", lambda self, X, Y: fits.append(X.shape[0]) or original(self, X, Y))
    first = crossfit_scores(data, "knn", {"k": 5}, seed=0, folds=4, fold_seed=2)
    assert fits == [120, 120, 120, 120, 160] and first.info["scores_from_cache"] is False
    files = list((tmp_path / "cache" / "scores").glob("*crossfit4*.npz"))
    assert len(files) == 1
    again = crossfit_scores(data, "knn", {"k": 5}, seed=0, folds=4, fold_seed=2)
    assert len(fits) == 5 and again.info["scores_from_cache"] is True  # no refit
    for split in first.splits:
        np.testing.assert_array_equal(first.splits[split].scores, again.splits[split].scores)
    assert again.info["out_of_fold"] == first.info["out_of_fold"]
    # the ranker's own decision threshold travels with fresh and cached scores
    assert {s.native_threshold for d in (first, again) for s in d.splits.values()} == {RANKERS.get("knn").native_threshold}
    for changed in ({"folds": 5, "fold_seed": 2}, {"folds": 4, "fold_seed": 3}):
        crossfit_scores(data, "knn", {"k": 5}, seed=0, **changed)
    assert len(fits) == 5 + 6 + 5


def test_too_many_folds_is_an_error_before_any_fit_or_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="folds = 161 exceeds the 160 training documents"):
        crossfit_scores(make_data(), "knn", {"k": 5}, folds=161)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.npz"))
