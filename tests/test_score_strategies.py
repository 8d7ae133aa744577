"""RCut, PCut and SCut against naive re-implementations; protocols on score data and ranked lists."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from xmlthresh.data.multilabel import ScoreData
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.metrics import evaluate
from xmlthresh.run.protocols import ProtocolError, fit_and_evaluate
from xmlthresh.strategies import STRATEGIES


def scored(seed: int, m: int = 300, n: int = 12, ties: bool = False) -> ScoredSplit:
    rng = np.random.default_rng(seed)
    labels = rng.random((m, n)) < 0.1
    scores = 1.5 * labels + rng.standard_normal((m, n))
    if ties:
        scores = np.round(scores)
    return ScoredSplit(scores, labels)


def naive_metrics(split: ScoredSplit, predicted: np.ndarray, beta=1.0) -> dict:
    Y = split.labels.toarray()
    tp = (predicted & Y).sum(axis=0)
    kept = Y.sum(axis=0) > 0
    return evaluate(tp[kept], predicted.sum(axis=0)[kept], Y.sum(axis=0)[kept], beta)


def test_rcut_matches_naive_top_t_with_ties():
    split = scored(0, ties=True)
    model = STRATEGIES.get("rcut")().fit_scores(split)
    S = split.scores
    best = []
    for t in range(1, 13):
        order = np.argsort(-S, axis=1, kind="stable")[:, :t]
        predicted = np.zeros(S.shape, bool)
        np.put_along_axis(predicted, order, True, axis=1)
        best.append(naive_metrics(split, predicted)["f_macro"])
    assert model.t_ == int(np.argmax(best[:20])) + 1
    assert model.f_macro_ == pytest.approx(max(best), abs=1e-12)


def test_rcut_on_sparse_scores_gives_only_scored_labels():
    dense = scored(1)
    sparse = ScoredSplit(sp.csr_matrix(np.where(dense.scores > 1.0, dense.scores, 0)), dense.labels)
    model = STRATEGIES.get("rcut")(t=3).fit_scores(sparse)
    tp, predicted = model.counts(sparse)
    per_doc = np.minimum(np.diff(sparse.scores.indptr), 3)
    assert predicted.sum() == per_doc.sum()


def test_rcut_on_sparse_scores_without_a_stored_entry_predicts_nothing():
    split = ScoredSplit(sp.csr_matrix((3, 2)), np.array([[1, 0], [0, 1], [1, 1]], dtype=bool))
    model = STRATEGIES.get("rcut")().fit_scores(split)
    tp, predicted = model.counts(split)
    assert predicted.sum() == 0 and tp.sum() == 0 and model.f_macro_ == 0.0


def test_pcut_matches_naive_proportional_cut():
    fit, test = scored(2), scored(3, m=200)
    model = STRATEGIES.get("pcut")().fit_scores(fit)
    prior = fit.labels.toarray().mean(axis=0)
    cuts = np.rint(model.x_ * prior * test.n_docs).astype(int)
    order = np.argsort(-test.scores, axis=0, kind="stable")
    predicted = np.zeros(test.scores.shape, bool)
    for k in range(test.n_labels):
        predicted[order[: cuts[k], k], k] = True
    assert model.evaluate_scores(test)["f_macro"] == pytest.approx(naive_metrics(test, predicted)["f_macro"])


def test_scut_equals_independent_on_the_fit_split_and_fbr_falls_back():
    fit, test = scored(4), scored(5)
    scut = STRATEGIES.get("scut")().fit_scores(fit)
    independent = STRATEGIES.get("independent")().fit_scores(fit)
    np.testing.assert_array_equal(scut.score_thresholds_, independent.score_thresholds_)
    assert scut.evaluate_scores(test) == pytest.approx(independent.evaluate_scores(test))
    strict = STRATEGIES.get("scut")(fbr=0.99, fbr_fallback="none").fit_scores(fit)
    assert strict.info_["n_fbr_fallbacks"] == fit.n_labels
    assert np.all(np.isinf(strict.score_thresholds_))
    top = STRATEGIES.get("scut")(fbr=0.99, fbr_fallback="top").fit_scores(fit)
    np.testing.assert_array_equal(top.score_thresholds_, fit.scores.max(axis=0))


@pytest.mark.parametrize("name, params, message", [
    ("scut", {"fbr": 1.5}, "fbr must lie in"),
    ("scut", {"fbr_fallback": "maybe"}, "fbr_fallback"),
    ("rcut", {"t": 0}, "t must be"),
    ("pcut", {"x": -1.0}, "x must be"),
])
def test_parameters_out_of_range_are_named(name, params, message):
    with pytest.raises(ValueError, match=message):
        STRATEGIES.get(name)(**params).fit_scores(scored(0))


def test_score_strategies_skip_ranked_lists_with_a_reason():
    lists = generate_ranked_lists(n_labels=5, num_docs=50)
    for name in ("rcut", "pcut", "scut"):
        skipped, reason = STRATEGIES.get(name)().skip(lists)
        assert skipped and "needs per-document scores" in reason
    assert STRATEGIES.get("domain")().skip(lists) == (False, "")


def test_protocols_on_score_data():
    data = ScoreData("toy", {"validation": scored(6), "test": scored(7)})
    for name in ("domain", "independent", "coordinate", "rcut", "pcut", "scut"):
        oracle = fit_and_evaluate(STRATEGIES.get(name)(), data, "oracle")
        holdout = fit_and_evaluate(STRATEGIES.get(name)(), data, "holdout")
        assert oracle["protocol"] == "oracle" and holdout["protocol"] == "holdout"
        assert holdout["fit_f_macro"] >= 0 and 0 <= holdout["f_macro"] <= 1
    domain_oracle = fit_and_evaluate(STRATEGIES.get("domain")(), data, "oracle")
    for name in ("independent", "rcut", "pcut", "scut"):  # nobody beats the certified optimum on test
        assert fit_and_evaluate(STRATEGIES.get(name)(), data, "oracle")["f_macro"] <= domain_oracle["upper_bound"] + 1e-12
    with pytest.raises(ProtocolError, match="validation split"):
        fit_and_evaluate(STRATEGIES.get("domain")(), ScoreData("toy", {"test": scored(7)}), "holdout")


def test_holdout_on_ranked_lists_reports_eval_metrics_and_fit_bounds():
    lists = generate_ranked_lists(n_labels=50, num_docs=400, seed=1)
    result = fit_and_evaluate(STRATEGIES.get("domain")(), lists, "holdout", seed=0)
    assert result["lower_bound"] is None and result["fit_upper_bound"] >= result["fit_lower_bound"]
    assert result["n_docs"] == 200 and result["f_macro"] <= 1


def test_include_predict_all_travels_with_the_score_data(tmp_path):
    # sparse top-k scores: label 1's only relevant document (3) is unscored, only "predict all" reaches it
    scores = sp.csr_matrix(np.array([[0.9, 0.8], [0.1, 0.7], [0.5, 0.6], [0.2, 0.0]]))
    labels = np.array([[1, 0], [0, 0], [0, 0], [0, 1]], dtype=bool)
    split = ScoredSplit(scores, labels)
    assert split.include_predict_all and split.with_predict_all(True) is split
    with_all = STRATEGIES.get("independent")().fit_scores(split)
    without = STRATEGIES.get("independent")().fit_scores(split.with_predict_all(False))
    assert with_all.score_thresholds_[1] == -np.inf
    assert np.all(without.score_thresholds_ > -np.inf)
    # a data set's flag reaches every split it loads, hence every protocol
    from xmlthresh.datasets import DATASETS
    from xmlthresh.datasets.score_loader import save_scores

    path = save_scores(tmp_path / "s.npz", ScoreData("toy", {"validation": split, "test": split}))
    data = DATASETS.get("scores")(str(path), include_predict_all=False).load()
    assert all(not s.include_predict_all for s in data.splits.values())
    result = fit_and_evaluate(STRATEGIES.get("independent")(), data, "holdout")
    assert result["fit_f_macro"] == pytest.approx(without.f_macro_)
    assert result["fit_f_macro"] < with_all.f_macro_
