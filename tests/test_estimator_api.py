"""Every registered strategy, the peers included, is a scikit-learn estimator on score matrices:
fit(scores, labels) / predict(scores) / score(scores, labels), check_is_fitted, grid search; the split-level
hooks (fit_scores, predict_split, counts) agree with each other."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.validation import check_is_fitted

from score_instances import random_scores
from xmlthresh.data.scores import ScoredSplit
from xmlthresh.metrics import f_macro_score
from xmlthresh.config.plugins import load_plugins
from xmlthresh.strategies import STRATEGIES, BaseStrategy

load_plugins()


def available(name: str) -> bool:
    reason = getattr(STRATEGIES.get(name), "unavailable_reason", None)
    return not (callable(reason) and reason())


NAMES = [name for name in STRATEGIES.names() if available(name)]


def small_params(name: str) -> dict:
    return {"linearization_region": {"grid": 10}, "xcolumns_bca": {"max_outer": 4, "max_iter": 5},
            "native": {"threshold": 0.5}}.get(name, {})


@pytest.mark.parametrize("top_k", [None, 4], ids=["dense", "sparse_top4"])
@pytest.mark.parametrize("name", NAMES)
def test_fit_predict_score_on_score_matrices(name, top_k):
    scores, labels = random_scores(1, n_docs=90, n_labels=8, top_k=top_k, ties=True)
    model = STRATEGIES.get(name)(beta=1.5, **small_params(name))
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    with pytest.raises(NotFittedError, match="not fitted"):
        model.predict(scores)
    assert model.fit(scores, labels) is model
    check_is_fitted(model)
    assert model.n_features_in_ == 8
    pred = model.predict(scores)
    assert sp.isspmatrix_csr(pred) and pred.dtype == bool and pred.shape == scores.shape
    assert pred.has_canonical_format
    # predictions, counts and the reported F-macro agree exactly on the fit data
    split = ScoredSplit(scores, labels)
    tp, predicted = model.counts(split)
    np.testing.assert_array_equal(split.counts_of(pred), (tp, predicted))
    assert f_macro_score(labels, pred, beta=1.5) == model.f_macro_
    assert model.score(scores, labels) == model.f_macro_
    # the report is plain data
    assert model.report()["f_macro"] == model.f_macro_
    with pytest.raises(ValueError, match="fitted on 8 labels"):
        model.predict(scores[:, :7])


@pytest.mark.parametrize("name", NAMES)
def test_strategies_keep_the_public_contract(name):
    """A strategy implements the split-level hooks only: fit / predict / score stay the base class's, and
    fit_scores takes the split alone (include_predict_all travels with it)."""
    cls = STRATEGIES.get(name)
    for method in ("fit", "predict", "score"):
        assert getattr(cls, method) is getattr(BaseStrategy, method), (
            f"{name} overrides {method}; implement fit_scores(split) / predict_split(split) instead")
    assert list(inspect.signature(cls.fit_scores).parameters) == ["self", "split"], (
        f"{name}.fit_scores must take (self, split) and read split.include_predict_all")
    model = cls()
    assert clone(model).get_params() == model.get_params()


def test_include_predict_all_is_a_fit_argument():
    scores, labels = random_scores(3, n_docs=200, n_labels=10, top_k=2)
    with_all = STRATEGIES.get("domain")().fit(scores, labels)
    without = STRATEGIES.get("domain")().fit(scores, labels, include_predict_all=False)
    assert np.any(with_all.score_thresholds_ == -np.inf)
    assert not np.any(without.score_thresholds_ == -np.inf)
    assert without.f_macro_ <= with_all.upper_bound_


def test_predict_needs_no_labels_and_transfers_to_other_documents():
    scores, labels = random_scores(4, n_docs=300, n_labels=10, top_k=5)
    model = STRATEGIES.get("domain")().fit(scores[:200], labels[:200])
    pred = model.predict(scores[200:])
    expected = ScoredSplit(scores[200:]).predict(model.score_thresholds_)
    assert (pred != expected).nnz == 0
    assert model.score(scores[200:], labels[200:]) == f_macro_score(labels[200:], pred)


def test_a_strategy_fitted_on_ranked_lists_cannot_predict_scores():
    from xmlthresh.data.ranked_lists import RankedLists

    lists = RankedLists.from_relevance_lists([[1, 0, 1], [0, 1, 0]], [2, 1], num_docs=3)
    model = STRATEGIES.get("domain")().fit_lists(lists)
    with pytest.raises(NotFittedError, match="ranked lists"):
        model.predict(np.zeros((3, 2)))


def test_grid_search_tunes_a_strategy_on_score_matrices():
    scores, labels = random_scores(5, n_docs=240, n_labels=10)
    search = GridSearchCV(STRATEGIES.get("scut")(), {"fbr": [0.0, 0.3, 0.9]},
                          cv=KFold(3, shuffle=True, random_state=0)).fit(scores, labels)
    assert search.best_params_["fbr"] in (0.0, 0.3, 0.9)
    assert search.predict(scores).shape == scores.shape


def test_a_ranked_list_run_imports_no_scikit_learn():
    """Strategies carry scikit-learn's estimator protocol without importing it (2 s of CPU per run)."""
    import subprocess
    import sys

    script = ("import sys\nfrom xmlthresh.strategies import STRATEGIES\nfrom xmlthresh.datasets import DATASETS\n"
              "lists = DATASETS.build('synthetic', {}).load()\nmodel = STRATEGIES.build('domain', {'beta': 2.0})\n"
              "model.warm_up(); model.fit_lists(lists)\nprint(repr(model))\n"
              "print([m for m in ('sklearn', 'pandas', 'scipy.stats') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.splitlines()[-2] == "DomainStrategy(beta=2.0)" and out.splitlines()[-1] == "[]"
