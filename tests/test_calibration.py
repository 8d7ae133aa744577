"""The isotonic calibration of ``xmlthresh.strategies.calibration`` against scikit-learn's
:class:`sklearn.isotonic.IsotonicRegression`, the reference implementation of the same regression.

What agrees (to 1e-12): the fitted values at every fit score. Both regress the 0/1 labels on the scores by pool
adjacent violators, non-decreasing, and both treat tied scores the same way -- equal scores are pooled *before*
the regression (de Leeuw's "secondary" approach: tied scores always get one common value, the mean of their
labels, weighted by their number). So the per-label maps (``isotonic``), the pooled map (``pooled``), their
mixture under ``shrinkage`` and the tie convention are all checked against scikit-learn, on dense and sparse
scores. ``ScoreCalibration`` takes no sample weights; repeating an entry is its way of weighting it, and that
matches scikit-learn's ``sample_weight``.

What differs, by design, and is tested as such: between and beyond the fit scores.

* Between two fit scores ``calibration`` is a **step function**: a new score gets the value of the largest fit
  score at or below it (the block it falls in), so eta only changes at fit scores and a threshold on eta is a
  threshold on the score. scikit-learn interpolates linearly between its fitted points.
* Below the smallest fit score a new score gets the first value, above the largest the last one: scikit-learn's
  ``out_of_bounds="clip"`` (its default, ``"nan"``, returns NaN there).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from xmlthresh.data.scores import ScoredSplit
from xmlthresh.strategies.calibration import ScoreCalibration, _pav, _step_eval

TOL = 1e-12
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: few distinct score levels, so that ties are common; none is 0 (a sparse matrix would drop it)
LEVELS = st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])


def sklearn_isotonic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None) -> IsotonicRegression:
    return IsotonicRegression(increasing=True, out_of_bounds="clip").fit(x, y, sample_weight=weight)


def stepwise(model: IsotonicRegression, fit_x: np.ndarray, query: np.ndarray) -> np.ndarray:
    """scikit-learn's fitted value at the largest fit score <= each query (the smallest fit score below them):
    the step function that ``calibration`` evaluates."""
    grid = np.unique(fit_x)
    left = grid[np.clip(np.searchsorted(grid, query, side="right") - 1, 0, len(grid) - 1)]
    return model.predict(left)


def kernel_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(x, kind="stable")
    return _pav(x[order].astype(np.float64), y[order].astype(np.float64))


@st.composite
def regressions(draw, min_size: int = 1):
    """(scores, 0/1 labels) with ties."""
    size = draw(st.integers(min_size, 40))
    x = np.array(draw(st.lists(LEVELS, min_size=size, max_size=size)))
    y = np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=np.float64)
    return x, y


@st.composite
def splits(draw):
    """A labelled split of scores (documents x labels) with ties, dense or sparse, that can be calibrated."""
    m = draw(st.integers(2, 12))
    n = draw(st.integers(1, 4))
    scores = np.array(draw(st.lists(LEVELS, min_size=m * n, max_size=m * n))).reshape(m, n)
    labels = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
    sparse = draw(st.booleans())
    if sparse:
        stored = np.array(draw(st.lists(st.booleans(), min_size=m * n, max_size=m * n))).reshape(m, n)
        scores = np.where(stored, scores, 0.0)
    values = scores[scores != 0] if sparse else scores.ravel()
    scored_truth = labels[scores != 0] if sparse else labels.ravel()
    assume(values.size > 0 and np.ptp(values) > 0 and labels.any() and scored_truth.size > 0)
    return (sp.csr_matrix(scores) if sparse else scores), labels, sparse


def entries_of(scores, labels, k: int, sparse: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label k's scored documents, their scores and their labels."""
    column = scores[:, [k]].toarray().ravel() if sparse else scores[:, k]
    docs = np.flatnonzero(column != 0) if sparse else np.arange(len(column))
    return docs, column[docs], labels[docs, k].astype(np.float64)


def fitted_at_fit_scores(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's steps (block starts, block values) for (x, y) and its fitted value at every x."""
    starts, values = kernel_fit(x, y)
    return starts, values, _step_eval(starts, values, x.astype(np.float64))


# ---------------------------------------------------------------------- the regression kernel
@SETTINGS
@given(regressions())
def test_pav_equals_sklearn_at_every_fit_score(data):
    x, y = data
    _, _, ours = fitted_at_fit_scores(x, y)
    np.testing.assert_allclose(ours, sklearn_isotonic(x, y).predict(x), rtol=0, atol=TOL)


@SETTINGS
@given(regressions())
def test_tied_scores_share_one_value_and_the_steps_rise_strictly(data):
    """The tie convention (both implementations): ties are pooled first, never split between two blocks."""
    x, y = data
    starts, values, fitted = fitted_at_fit_scores(x, y)
    for level in np.unique(x):
        assert np.ptp(fitted[x == level]) == 0.0
    assert len(np.unique(starts)) == len(starts)  # a block starts at a distinct score
    assert np.all(np.diff(values) > 0)  # equal neighbouring means were pooled: strictly increasing steps


@SETTINGS
@given(regressions(), st.lists(st.integers(1, 4), min_size=40, max_size=40))
def test_repeated_entries_match_sklearn_sample_weight(data, repeats):
    x, y = data
    weight = np.array(repeats[:len(x)], dtype=np.float64)
    starts, values = kernel_fit(np.repeat(x, repeats[:len(x)]), np.repeat(y, repeats[:len(x)]))
    ours = _step_eval(starts, values, x.astype(np.float64))
    np.testing.assert_allclose(ours, sklearn_isotonic(x, y, weight).predict(x), rtol=0, atol=TOL)


@SETTINGS
@given(regressions(min_size=2), st.lists(st.floats(-1.0, 4.0, allow_nan=False), min_size=1, max_size=20))
def test_between_and_beyond_fit_scores_a_step_not_an_interpolation(data, queries):
    """The documented difference: a new score takes the value of the largest fit score at or below it (the first
    value below every fit score, the last above them, as with ``out_of_bounds="clip"``)."""
    x, y = data
    query = np.array(queries)
    starts, values = kernel_fit(x, y)
    ours = _step_eval(starts, values, query)
    np.testing.assert_allclose(ours, stepwise(sklearn_isotonic(x, y), x, query), rtol=0, atol=TOL)


def test_the_difference_on_a_small_example():
    x, y = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    starts, values = kernel_fit(x, y)
    query = np.array([0.0, 1.0, 1.5, 2.0, 3.0])
    assert _step_eval(starts, values, query).tolist() == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert sklearn_isotonic(x, y).predict(query).tolist() == [0.0, 0.0, 0.5, 1.0, 1.0]  # linear in between
    assert np.isnan(IsotonicRegression().fit(x, y).predict(query)[[0, -1]]).all()  # its default: NaN outside


def test_violators_are_pooled_like_sklearn():
    x = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    starts, values = kernel_fit(x, y)
    np.testing.assert_allclose(_step_eval(starts, values, x), sklearn_isotonic(x, y).predict(x), atol=TOL)
    assert starts.tolist() == [1.0, 5.0] and values.tolist() == pytest.approx([0.4, 1.0])


# ---------------------------------------------------------------------- the fitted calibration
@SETTINGS
@given(splits(), st.sampled_from([0.0, 0.5, 10.0]))
def test_isotonic_calibration_equals_sklearn_per_label_and_pooled(split, shrinkage):
    """eta_k = w_k f_k + (1 - w_k) f_pooled at every fit entry, with f_k and f_pooled scikit-learn's isotonic fits
    of label k's entries and of all entries, w_k = s_k / (s_k + shrinkage) (0 for a label without a positive or
    with a single distinct score; with shrinkage 0, 1 for every other label)."""
    scores, labels, sparse = split
    calibration = ScoreCalibration("isotonic", shrinkage=shrinkage).fit(ScoredSplit(scores, labels))
    eta = calibration.transform(scores)
    eta = eta.toarray() if sparse else eta
    per_label = [entries_of(scores, labels, k, sparse) for k in range(labels.shape[1])]
    pooled = sklearn_isotonic(np.concatenate([x for _, x, _ in per_label]),
                              np.concatenate([y for _, _, y in per_label]))
    for k, (docs, x, y) in enumerate(per_label):
        if len(docs) == 0:
            continue
        positives = y.sum()
        if positives == 0 or np.ptp(x) == 0:
            weight = 0.0
        else:
            weight = positives / (positives + shrinkage) if shrinkage > 0 else 1.0
        own = sklearn_isotonic(x, y).predict(x) if weight > 0 else 0.0
        expected = weight * own + (1.0 - weight) * pooled.predict(x)
        np.testing.assert_allclose(eta[docs, k], expected, rtol=0, atol=TOL)
        assert calibration.weight_[k] == pytest.approx(weight, abs=TOL)


@SETTINGS
@given(splits(), st.lists(st.floats(-1.0, 4.0, allow_nan=False), min_size=1, max_size=10))
def test_pooled_calibration_equals_sklearn_on_new_scores_as_a_step(split, queries):
    """``pooled``: one isotonic map of every entry of every label, evaluated on new scores as the step function."""
    scores, labels, sparse = split
    calibration = ScoreCalibration("pooled").fit(ScoredSplit(scores, labels))
    entries = [entries_of(scores, labels, k, sparse) for k in range(labels.shape[1])]
    fit_x = np.concatenate([x for _, x, _ in entries])
    model = sklearn_isotonic(fit_x, np.concatenate([y for _, _, y in entries]))
    new = np.repeat(np.array(queries)[:, None], labels.shape[1], axis=1)
    np.testing.assert_allclose(calibration.transform(new), stepwise(model, fit_x, new.ravel()).reshape(new.shape),
                               rtol=0, atol=TOL)
