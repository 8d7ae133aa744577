"""Rankers (br_logreg, mlknn, knn), their quality measures and the cached ``ranker_scores``."""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from omegaconf import OmegaConf
from sklearn.datasets import make_multilabel_classification
from sklearn.metrics import label_ranking_loss

from helpers import PACKAGE_CONF
from xmlthresh.data.multilabel import MultiLabelData
from xmlthresh.rankers import (
    RANKERS,
    RankerUnavailableError,
    make_ranker,
    precision_at_k,
    ranker_scores,
    ranking_loss,
    unavailable_rankers,
)
from xmlthresh.rankers.base import top_k_per_row

CONF = PACKAGE_CONF
N_LABELS = 15
NO_TRAIN_POSITIVE = 4  # label without a positive training document (but with positives in test)
RANKER_NAMES = ["br_logreg", "mlknn", "knn"]


def make_data(seed: int = 0, n_train: int = 400) -> MultiLabelData:
    """A small feature problem from scikit-learn's generator: train / validation / test."""
    X, Y = make_multilabel_classification(n_samples=n_train + 300, n_features=30, n_classes=N_LABELS, n_labels=3,
                                          allow_unlabeled=True, random_state=seed)
    Y = Y.astype(bool)
    Y[:n_train, NO_TRAIN_POSITIVE] = False
    parts = {"train": slice(0, n_train), "validation": slice(n_train, n_train + 150),
             "test": slice(n_train + 150, None)}
    return MultiLabelData(f"mlc{seed}", {s: X[p] for s, p in parts.items()},
                          {s: sp.csr_matrix(Y[p]) for s, p in parts.items()},
                          np.array([f"L{k}" for k in range(N_LABELS)]))


@pytest.fixture(scope="module")
def data() -> MultiLabelData:
    return make_data()


@pytest.fixture(scope="module")
def dense_scores(data):
    return {name: ranker_scores(data, name, {}, seed=0, cache=False) for name in RANKER_NAMES}


def chance_precision_at_1(labels: sp.csr_matrix) -> float:
    counts = np.diff(labels.indptr)
    return float((counts[counts > 0] / labels.shape[1]).mean())


@pytest.mark.parametrize("name", RANKER_NAMES)
def test_ranker_beats_chance_with_dense_scores(dense_scores, data, name):
    result = dense_scores[name]
    assert set(result.splits) == {"validation", "test"} and result.name == data.name
    for split, scored in result.splits.items():
        assert isinstance(scored.scores, np.ndarray) and scored.scores.dtype == np.float64
        assert scored.scores.shape == (data.X[split].shape[0], N_LABELS)
        assert np.all(np.isfinite(scored.scores))
        assert list(scored.label_names) == list(data.label_names)
    info = result.info
    chance = chance_precision_at_1(data.Y["test"])
    assert info["ranker_p_at_1"] > chance + 0.15, (info["ranker_p_at_1"], chance)
    assert info["ranker_p_at_1"] >= info["ranker_p_at_5"] > 0
    assert 0 < info["ranker_ranking_loss"] < 0.45
    assert info["ranker"] == name and info["scores_from_cache"] is False and info["ranker_fit_seconds"] >= 0


@pytest.mark.parametrize("name", RANKER_NAMES)
def test_top_k_scores_are_the_best_k_of_the_dense_scores(dense_scores, data, name):
    top = ranker_scores(data, name, {"top_k": 3}, seed=0, cache=False).splits["test"].scores
    dense = dense_scores[name].splits["test"].scores
    assert sp.issparse(top) and top.shape == dense.shape
    assert np.diff(top.indptr).max() <= 3
    rows = np.repeat(np.arange(top.shape[0]), np.diff(top.indptr))
    np.testing.assert_allclose(top.data, dense[rows, top.indices])
    if name != "knn":  # dense rankers score every label: exactly 3 per row, and no unkept score beats them
        assert np.all(np.diff(top.indptr) == 3)
        third_best = np.sort(dense, axis=1)[:, -3]
        row_min = np.minimum.reduceat(top.data, top.indptr[:-1])
        np.testing.assert_allclose(row_min, third_best)


def test_labels_without_training_positives_get_constant_scores(dense_scores):
    br = dense_scores["br_logreg"].splits["test"].scores
    assert np.all(br[:, NO_TRAIN_POSITIVE] == 0.0)
    knn = dense_scores["knn"].splits["test"].scores
    assert np.all(knn[:, NO_TRAIN_POSITIVE] == 0.0)
    mlknn = dense_scores["mlknn"].splits["test"].scores
    assert np.ptp(mlknn[:, NO_TRAIN_POSITIVE]) == 0.0  # every neighbour count is 0: the same posterior
    # labels that no / every training document has: constant 0 / 1, also when no label can be fitted
    X = np.random.default_rng(0).random((20, 4))
    Y = np.zeros((20, 2), dtype=bool)
    Y[:, 1] = True
    model = RANKERS.get("br_logreg")().fit(X, Y)
    np.testing.assert_array_equal(model.predict_scores(X), np.tile([0.0, 1.0], (20, 1)))
    assert model.n_constant_labels_ == 2


def test_mlknn_equals_scikit_multilearn(data):
    from skmultilearn.adapt import MLkNN

    from xmlthresh.rankers.mlknn import vectorised_mlknn_class

    X, Y = data.X["train"][:200], sp.csr_matrix(data.Y["train"][:200], dtype=np.int64)
    reference = MLkNN(k=7, s=0.5).fit(X, Y)
    fast = vectorised_mlknn_class()(k=7, s=0.5).fit(X, Y)
    X_test = data.X["test"][:60]
    np.testing.assert_allclose(fast.predict_proba(X_test), reference.predict_proba(X_test).toarray(), rtol=1e-12)
    np.testing.assert_array_equal(fast.predict(X_test).toarray(), reference.predict(X_test).toarray())


def test_knn_scores_are_weighted_neighbour_votes():
    X_train = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    Y_train = sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=bool))
    model = RANKERS.get("knn")(k=2).fit(X_train, Y_train)
    scores = model.predict_scores(np.array([[1.0, 0.0]]))
    # neighbours: doc 0 (cos 1) and doc 2 (cos 1/sqrt 2); label 1 only from doc 2, label 2 never
    w0, w2 = 1.0, 1 / np.sqrt(2)
    np.testing.assert_allclose(scores, [[1.0, w2 / (w0 + w2), 0.0]])


def test_cache_hit_does_not_refit(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    data = make_data(seed=1, n_train=200)
    first = ranker_scores(data, "knn", {"k": 5, "top_k": 4}, seed=3)
    assert first.info["scores_from_cache"] is False
    files = list((tmp_path / "cache" / "scores").glob("*.npz"))
    assert len(files) == 1 and not list((tmp_path / "cache" / "scores").glob(".*"))  # no temp file left

    def refuse(*args, **kwargs):
        raise AssertionError("the ranker was refitted despite a cached result")

    monkeypatch.setattr(RANKERS.get("knn"), "fit", refuse)
    with caplog.at_level(logging.INFO, logger="xmlthresh.rankers.scoring"):
        second = ranker_scores(data, "knn", {"k": 5, "top_k": 4}, seed=3)
    assert second.info["scores_from_cache"] is True
    assert any("scores from cache" in record.getMessage() for record in caplog.records)
    assert second.name == first.name and set(second.splits) == set(first.splits)
    assert {s.native_threshold for d in (first, second) for s in d.splits.values()} == {0.5}  # the ranker's own
    for split in first.splits:
        assert (first.splits[split].scores != second.splits[split].scores).nnz == 0
        assert (first.splits[split].labels != second.splits[split].labels).nnz == 0
        assert list(second.splits[split].label_names) == list(data.label_names)
    for key in ("ranker_p_at_1", "ranker_ranking_loss", "ranker_fit_seconds", "ranker_params"):
        assert second.info[key] == first.info[key]

    # anything in the key changed -> a miss -> a refit (which the patched fit refuses)
    changed = [
        dict(data=data, ranker_name="knn", params={"k": 6, "top_k": 4}, seed=3),
        dict(data=data, ranker_name="knn", params={"k": 5, "top_k": 4}, seed=4),
        dict(data=replace(make_data(seed=2, n_train=200), name=data.name), ranker_name="knn",
             params={"k": 5, "top_k": 4}, seed=3),
        dict(data=data, ranker_name="knn", params={"k": 5, "top_k": 4}, seed=3, cache=False),
    ]
    for kwargs in changed:
        with pytest.raises(AssertionError, match="refitted"):
            ranker_scores(**kwargs)

    # a damaged cache file is ignored (refit), not an error
    files[0].write_bytes(b"not an npz")
    monkeypatch.undo()
    monkeypatch.setenv("XMLTHRESH_CACHE", str(tmp_path / "cache"))
    third = ranker_scores(data, "knn", {"k": 5, "top_k": 4}, seed=3)
    assert third.info["scores_from_cache"] is False


def test_parameters_are_checked_and_missing_dependencies_reported(monkeypatch, data):
    with pytest.raises(ValueError, match="no parameter.*bogus.*its parameters: k, top_k"):
        make_ranker("knn", {"bogus": 1})
    assert make_ranker("br_logreg", {"name": "br_logreg", "C": 2.0}, seed=5).get_params()["random_state"] == 5
    with pytest.raises(ValueError, match="top_k"):
        make_ranker("knn", {"top_k": 0}).fit(data.X["train"], data.Y["train"])
    with pytest.raises(ValueError, match="0/1"):
        make_ranker("knn").fit(np.ones((2, 2)), np.array([[0, 2], [1, 0]]))

    monkeypatch.setattr(RANKERS.get("br_logreg"), "requirements", ("xmlthresh_no_such_module",))
    reasons = unavailable_rankers()
    assert set(reasons) == {"br_logreg"} and "pip install scikit-multilearn-ng" in reasons["br_logreg"]
    with pytest.raises(RankerUnavailableError, match="scikit-multilearn-ng"):
        ranker_scores(data, "br_logreg", {}, seed=0, cache=False)


@pytest.mark.parametrize("path", sorted((CONF / "ranker").glob("*.yaml")), ids=lambda p: p.stem)
def test_ranker_configs_build_their_ranker(path):
    params = OmegaConf.to_container(OmegaConf.load(path))
    assert params["name"] == path.stem
    make_ranker(path.stem, params, seed=0)
    assert set(RANKER_NAMES) == {p.stem for p in (CONF / "ranker").glob("*.yaml")}


# ---------------------------------------------------------------------- quality measures vs brute force
def brute_precision_at_k(dense: np.ndarray, labels: np.ndarray, k: int, scored: np.ndarray | None = None) -> float:
    """Oracle: only scored labels can be among the top k (unscored ones are never predicted)."""
    scored = np.ones_like(dense, dtype=bool) if scored is None else scored
    values = []
    for row, truth, mask in zip(dense, labels, scored):
        if truth.any():
            order = sorted(np.flatnonzero(mask), key=lambda j: (-row[j], j))[:k]
            values.append(sum(truth[j] for j in order) / k)
    return float(np.mean(values))


def test_quality_measures_match_brute_force_and_scikit_learn():
    rng = np.random.default_rng(7)
    m, n = 60, 12
    labels = rng.random((m, n)) < 0.2
    labels[:5] = False  # documents without labels are left out
    labels[5] = True  # a document with every label has ranking loss 0
    dense = np.round(rng.standard_normal((m, n)), 1)  # ties
    keep = rng.random((m, n)) < 0.5
    sparse = sp.csr_matrix((dense[keep], np.nonzero(keep)[1], np.r_[0, np.cumsum(keep.sum(1))]), shape=(m, n))
    filled = np.where(keep, dense, dense.min() - 1.0)  # unscored = below every score, tied

    has = labels.any(axis=1)
    expected_loss = label_ranking_loss(labels[has].astype(np.int64), filled[has])
    assert ranking_loss(sparse, sp.csr_matrix(labels)) == pytest.approx(expected_loss, abs=1e-12)
    assert ranking_loss(dense, sp.csr_matrix(labels)) == pytest.approx(
        label_ranking_loss(labels[has].astype(np.int64), dense[has]), abs=1e-12)
    p_dense = precision_at_k(dense, sp.csr_matrix(labels), (1, 3, 5))
    p_sparse = precision_at_k(sparse, sp.csr_matrix(labels), (1, 3, 5))
    for k in (1, 3, 5):
        assert p_dense[k] == pytest.approx(brute_precision_at_k(dense, labels, k))
        assert p_sparse[k] == pytest.approx(brute_precision_at_k(dense, labels, k, scored=keep))


def test_top_k_per_row_breaks_ties_towards_small_labels():
    dense = np.array([[1.0, 3.0, 3.0, 3.0, 0.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
    for scores in (dense, sp.csr_matrix(dense)):
        top = top_k_per_row(scores, 2)
        np.testing.assert_array_equal(top.toarray(), [[0, 3, 3, 0, 0], [5, 4, 0, 0, 0]])
    wide = np.tile(np.array([2.0, 1.0, 2.0, 2.0, 0.5, 2.0, 1.5, 2.0, 0.1, 2.0]), (3, 1))
    np.testing.assert_array_equal(top_k_per_row(wide, 3).indices, np.tile([0, 2, 3], 3))
