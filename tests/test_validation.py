"""Bad input gets one readable ValueError (InputError) saying what to do -- never a raw numpy, scipy or
numba traceback. Checked through a strategy's fit / predict, the public boundary."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from score_instances import random_scores
from xmlthresh.strategies import STRATEGIES
from xmlthresh.validation import InputError, check_labels, check_scores


def domain():
    return STRATEGIES.get("domain")()


def unsorted_csr() -> sp.csr_matrix:
    # row 0 stores labels 2 then 0: a valid CSR, but not in canonical format
    return sp.csr_matrix((np.array([0.3, 0.9, 0.5]), np.array([2, 0, 1]), np.array([0, 2, 3])), shape=(2, 3))


def duplicate_csr() -> sp.csr_matrix:
    # row 0 stores label 1 twice (sorted): scipy would add the two scores up
    return sp.csr_matrix((np.array([0.3, 0.4, 0.5]), np.array([1, 1, 2]), np.array([0, 2, 3])), shape=(2, 3))


LABELS = np.array([[1, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize("scores, labels, message", [
    (np.zeros((3, 2)), np.zeros((3, 3)), r"scores and labels differ in shape: scores \(3, 2\), labels \(3, 3\)"),
    (sp.csr_matrix(np.ones((2, 3))), np.zeros((2, 4)), "differ in shape"),
    (np.array([[0.1, np.nan, 0.3], [0.2, 0.1, 0.0]]), LABELS, r"1 value\(s\) are NaN or infinite, e.g. document 0, label 1"),
    (np.array([[0.1, 0.2, 0.3], [0.2, -np.inf, 0.0]]), LABELS, "NaN or infinite, e.g. document 1, label 1"),
    (sp.csr_matrix(np.array([[0.1, 0.0, 0.3], [np.inf, 0.1, 0.0]])), LABELS, "NaN or infinite, e.g. document 1, label 0"),
    (np.ones((2, 3)), np.array([[1, 0, 2], [0, 1, 0]]), r"labels must be 0/1 .*found 1 other value\(s\), e.g. 2"),
    (np.ones((2, 3)), np.array([[1.0, 0.5, 0.0], [0, 1, 0]]), "labels must be 0/1"),
    (np.ones((2, 3)), sp.csr_matrix(np.array([[1, 0, -1], [0, 1, 0]])), "labels must be 0/1"),
    (duplicate_csr(), LABELS, r"stores some \(document, label\) pair more than once"),
    (np.ones((2, 3)), duplicate_csr(), r"labels: the CSR matrix stores some \(document, label\) pair more than once"),
    (np.ones(3), np.ones(3), r"scores must be 2-D .*reshape\(-1, 1\)"),
    (np.array([["a", "b"], ["c", "d"]]), np.zeros((2, 2)), "real numbers"),
    (np.zeros((0, 3)), np.zeros((0, 3)), "at least one document and one label"),
    (sp.coo_matrix(np.ones((2, 3))), LABELS, r"COO matrix; pass CSR"),
])
def test_bad_input_is_one_readable_value_error(scores, labels, message):
    with pytest.raises(InputError, match=message) as caught:
        domain().fit(scores, labels)
    assert isinstance(caught.value, ValueError)
    assert caught.value.__cause__ is None and caught.value.__context__ is None  # no chained traceback


def test_predicting_with_another_number_of_labels_says_so():
    scores, labels = random_scores(0, n_docs=50, n_labels=6)
    model = domain().fit(scores, labels)
    with pytest.raises(InputError, match="have 5 label columns, but the thresholds were fitted on 6 labels"):
        model.predict(scores[:, :5])
    with pytest.raises(InputError, match="NaN"):
        model.predict(np.full((2, 6), np.nan))


def test_good_input_in_every_accepted_form():
    scores, labels = random_scores(2, n_docs=40, n_labels=5)
    reference = domain().fit(scores, labels).score_thresholds_
    for s, y in [(scores.tolist(), labels.tolist()), (scores, labels.astype(bool)),
                 (sp.csc_matrix(scores), sp.csr_matrix(labels)), (sp.csr_array(scores), sp.csc_array(labels))]:
        np.testing.assert_array_equal(domain().fit(s, y).score_thresholds_, reference)
    single = scores.astype(np.float32)  # other real dtypes are read as float64
    np.testing.assert_array_equal(domain().fit(single, labels).score_thresholds_,
                                  domain().fit(single.astype(np.float64), labels).score_thresholds_)
    # a CSR's stored zero is a score of 0, not "unscored"
    stored_zero = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    assert check_scores(stored_zero).nnz == 2
    assert check_labels(np.array([[True, False]]), (1, 2)).nnz == 1


def test_a_csr_whose_indices_are_in_rank_order_fits_as_its_sorted_copy():
    """Top-k output stores each row's labels in rank order: a valid CSR, not canonical; it was refused."""
    scores = unsorted_csr()
    untouched = scores.indices.copy()
    model = domain().fit(scores, LABELS)
    assert model.f_macro_ == domain().fit(scores.sorted_indices(), LABELS).f_macro_
    assert (scores.indices == untouched).all()
    assert (model.predict(scores) != model.predict(scores.sorted_indices())).nnz == 0
