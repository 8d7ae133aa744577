"""The ``corel5k_tagprop260`` data set: the leave-one-out nearest-neighbour vote against a plain loop,
the data set read from a TagProp-style .mat file, and its parameter checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.io import savemat

from xmlthresh.datasets import DATASETS
from xmlthresh.datasets import corel5k_tagprop260
from xmlthresh.validation import InputError


def tiny_mat(tmp_path, n_docs=30, n_labels=5, k=8, seed=0):
    rng = np.random.default_rng(seed)
    neighbours = np.stack([rng.permutation(np.delete(np.arange(n_docs), i))[:k] for i in range(n_docs)], axis=1)
    labels = rng.random((n_labels, n_docs)) < 0.3
    labels[:, 0] = True  # every label has a relevant document
    savemat(tmp_path / "tagprop_demo_corel5k.mat", {"NN": (neighbours + 1).astype(np.uint16),
                                                    "Y": labels.astype(np.uint8)})
    return neighbours, labels.T


@pytest.mark.parametrize("decay", [None, 3.0])
def test_vote_is_the_weighted_sum_over_the_neighbours(tmp_path, decay):
    neighbours, labels = tiny_mat(tmp_path)
    scores = corel5k_tagprop260.nn_vote_scores(neighbours, labels, 5, decay)
    expected = np.zeros(labels.shape)
    for i in range(labels.shape[0]):
        for rank in range(5):
            weight = 1.0 if decay is None else np.exp(-rank / decay)
            expected[i] += weight * labels[neighbours[rank, i]]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)


def test_the_data_set_scores_every_image_leave_one_out(tmp_path):
    neighbours, labels = tiny_mat(tmp_path)
    data = DATASETS.build("corel5k_tagprop260", {"path": str(tmp_path), "n_neighbours": 8, "decay": None}).load()
    split = data.splits["test"]
    assert split.n_docs == 30 and split.n_labels == 5
    assert (split.labels.toarray() == labels).all()
    assert data.info["scored"] == "training images, leave-one-out"
    assert np.isfinite(split.scores).all() and split.scores.max() <= 8


def test_bad_parameters_and_a_missing_file_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="dataset.n_neighbours"):
        DATASETS.build("corel5k_tagprop260", {"n_neighbours": 0})
    with pytest.raises(InputError, match="dataset.decay"):
        DATASETS.build("corel5k_tagprop260", {"decay": 0.0})
    with pytest.raises(Exception, match="tagprop_demo_corel5k.mat is missing"):
        DATASETS.build("corel5k_tagprop260", {"path": str(tmp_path / "nowhere")}).load()
