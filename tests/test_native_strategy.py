"""``strategy=native``: every label at the scores' own decision threshold, strictly above it (as a classifier's
``predict``), and a clear refusal when the scores declare none."""

from __future__ import annotations

import numpy as np
import pytest

import xmlthresh


@pytest.mark.fast
def test_native_predicts_what_the_classifier_predicts_and_needs_a_declared_threshold():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(40, 3))
    scores[0, 0] = 0.0  # exactly at the threshold: not predicted, as decision_function > 0
    labels = rng.random((40, 3)) < 0.4
    labels[0] = True
    result = xmlthresh.fit_thresholds(scores, labels, strategy="native", native_threshold=0.0)
    assert (result.predict(scores).toarray() == (scores > 0)).all()
    with pytest.raises(ValueError, match="strategy=native needs a decision threshold"):
        xmlthresh.fit_thresholds(scores, labels, strategy="native")
    given = xmlthresh.fit_thresholds(scores, labels, strategy="native", threshold=0.5)
    assert (given.predict(scores).toarray() == (scores > 0.5)).all()
