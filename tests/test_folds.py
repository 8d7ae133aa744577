"""K-fold assignment for cross-fitting: a seeded partition into near-equal folds, strict fold counts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import KFold

from xmlthresh.data.folds import check_folds, kfold_assignment


@pytest.mark.parametrize("n_docs, folds", [(10, 2), (11, 3), (391, 5), (7, 7)])
def test_folds_partition_the_documents_with_the_sizes_of_kfold(n_docs, folds):
    fold_of = kfold_assignment(n_docs, folds, seed=3)
    assert fold_of.shape == (n_docs,) and set(np.unique(fold_of)) == set(range(folds))
    sizes = np.bincount(fold_of, minlength=folds)
    reference = sorted(len(test) for _, test in KFold(folds, shuffle=True, random_state=0).split(np.zeros(n_docs)))
    assert sorted(sizes) == reference and sizes.max() - sizes.min() <= 1


def test_folds_follow_the_seed():
    np.testing.assert_array_equal(kfold_assignment(200, 5, seed=1), kfold_assignment(200, 5, seed=1))
    assert not np.array_equal(kfold_assignment(200, 5, seed=1), kfold_assignment(200, 5, seed=2))
    # a shuffle, not contiguous blocks of the document order
    assert not np.array_equal(kfold_assignment(200, 5, seed=1), np.repeat(np.arange(5), 40))


@pytest.mark.parametrize("folds, message", [
    (1, "integer >= 2, got 1"), (0, "integer >= 2"), (-3, "integer >= 2"), (4.5, r"got 4\.5 \(float\)"),
    (5.0, r"got 5\.0 \(float\)"), (True, r"got True \(bool\)"), ("5", r"got '5' \(str\)"), (None, "NoneType"),
])
def test_bad_fold_counts_are_rejected_not_converted(folds, message):
    with pytest.raises(ValueError, match=message):
        check_folds(folds)


def test_more_folds_than_documents_is_an_error():
    assert check_folds(np.int64(4), n_docs=4) == 4
    with pytest.raises(ValueError, match="folds = 5 exceeds the 4 training documents"):
        kfold_assignment(4, 5)
