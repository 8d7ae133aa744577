"""Dataset plugins: the embedded synthetic generator and the ranked-list file loader."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.download import DataUnavailableError
from xmlthresh.datasets import DATASETS
from xmlthresh.datasets.synthetic import generate_ranked_lists


def test_synthetic_is_seeded_and_consistent():
    a = generate_ranked_lists(n_labels=50, num_docs=300, seed=3)
    b = generate_ranked_lists(n_labels=50, num_docs=300, seed=3)
    c = generate_ranked_lists(n_labels=50, num_docs=300, seed=4)
    np.testing.assert_array_equal(a.relevant_rank, b.relevant_rank)
    assert not np.array_equal(a.n_relevant, c.n_relevant) or not np.array_equal(a.relevant_rank, c.relevant_rank)
    # complete lists contain every relevant document
    np.testing.assert_array_equal(a.n_relevant_in_list, a.n_relevant)
    assert a.n_relevant.min() >= 1


def test_synthetic_truncated_lists_keep_true_sizes():
    lists = generate_ranked_lists(n_labels=30, num_docs=500, list_length=20, seed=1)
    assert lists.list_length.max() == 20 and lists.num_docs == 500
    assert np.all(lists.n_relevant >= lists.n_relevant_in_list)
    assert np.any(lists.n_relevant > lists.n_relevant_in_list)


def test_a_better_ranker_puts_relevant_documents_higher():
    weak = generate_ranked_lists(n_labels=40, num_docs=400, signal=0.0, seed=2)
    strong = generate_ranked_lists(n_labels=40, num_docs=400, signal=4.0, seed=2)
    assert strong.relevant_rank.mean() < weak.relevant_rank.mean() / 3


def test_first_n_labels_and_bad_parameters():
    assert DATASETS.get("synthetic")(n_labels=30, first_n_labels=5).load().n_labels == 5
    assert DATASETS.get("synthetic")(n_labels=30, first_n_labels=30).load().n_labels == 30  # all: no error
    with pytest.raises(ValueError, match="list_length"):
        generate_ranked_lists(num_docs=10, list_length=11)


def test_ranked_list_file_relative_to_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XMLTHRESH_DATA", str(tmp_path))
    (tmp_path / "mine.txt").write_text("3 2 1 0 1 0\n")
    lists = DATASETS.get("ranked_lists")(path="mine.txt", num_docs=10).load()
    assert lists.name == "mine" and lists.num_docs == 10 and lists.label_ids[0] == 3
    with pytest.raises(DataUnavailableError, match="does not exist.*XMLTHRESH_DATA"):
        DATASETS.get("ranked_lists")(path="other.txt").load()
    with pytest.raises(DataUnavailableError, match="does not exist"):
        DATASETS.get("ranked_lists")(path=str(tmp_path / "absent.txt")).load()


@pytest.mark.parametrize("name, params", [("synthetic", {"n_labels": 30}),
                                          ("synthetic_xmc", {"n_labels": 30, "num_docs": 40})])
def test_first_n_labels_above_the_labels_is_an_error_not_a_cap(name, params):
    """Issue 15: 128 "first labels" of an 80-label set used to give the 80 labels silently."""
    from xmlthresh.validation import InputError

    with pytest.raises(InputError, match=r"^dataset.first_n_labels=31 is above the 30 labels of "):
        DATASETS.get(name)(first_n_labels=31, **params).load()
