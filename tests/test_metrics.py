"""Metrics: values by hand, conventions for empty predictions, agreement of the ranked-list path."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.data.evaluation import evaluate_cuts, true_positives_at_cuts
from xmlthresh.metrics import evaluate, f_beta


def test_f_beta_values_and_zero_convention():
    assert f_beta(0.5, 1.0) == pytest.approx(2 / 3)
    assert f_beta(0.5, 1.0, beta=2.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1))
    assert f_beta(0.0, 0.0) == 0.0
    np.testing.assert_allclose(f_beta(np.array([1.0, 0.0]), np.array([1.0, 0.0])), [1.0, 0.0])


def test_evaluate_by_hand():
    # label 1: 2 of 4 predicted relevant, s = 2; label 2: 1 of 1, s = 3
    result = evaluate(tp=[2, 1], cut=[4, 1], n_relevant=[2, 3])
    p, r = (0.5 + 1.0) / 2, (1.0 + 1 / 3) / 2
    assert result["precision"] == pytest.approx(p)
    assert result["recall"] == pytest.approx(r)
    assert result["f_macro"] == pytest.approx(2 * p * r / (p + r))
    assert result["macro_f"] == pytest.approx((f_beta(0.5, 1.0) + f_beta(1.0, 1 / 3)) / 2)
    assert result["micro_f"] == pytest.approx(f_beta(3 / 5, 3 / 5))


def test_empty_prediction_has_precision_zero():
    result = evaluate(tp=[0], cut=[0], n_relevant=[1])
    assert result["precision"] == 0.0 and result["f_macro"] == 0.0 and result["micro_f"] == 0.0


def test_labels_without_relevant_documents_are_refused():
    with pytest.raises(ValueError, match="at least one relevant"):
        evaluate(tp=[0], cut=[1], n_relevant=[0])


def test_true_positives_at_cuts_on_ranked_lists():
    lists = RankedLists.from_relevance_lists([[1, 0, 1, 1], [0, 1]], [3, 4], num_docs=9)
    np.testing.assert_array_equal(true_positives_at_cuts(lists, [3, 2]), [2, 1])
    np.testing.assert_array_equal(true_positives_at_cuts(lists, [4, 9]), [3, 4])  # 9 = predict all: tp = s
    assert evaluate_cuts(lists, [1, 9])["recall"] == pytest.approx((1 / 3 + 1) / 2)
    with pytest.raises(ValueError, match="outside its known list"):
        true_positives_at_cuts(lists, [4, 5])
