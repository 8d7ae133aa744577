"""The ranked-list model: validation, label selection, the s_k = 0 convention."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.ranked_lists import RankedLists, RankedListsError


def small() -> RankedLists:
    return RankedLists.from_relevance_lists([[1, 0, 1], [0, 0, 0], [0, 1]], [2, 0, 3], num_docs=5,
                                            label_ids=np.array(["a", "b", "c"]))


def test_select_labels_gathers_csr_rows():
    lists = small().select_labels(np.array([2, 0]))
    np.testing.assert_array_equal(lists.label_ids, ["c", "a"])
    np.testing.assert_array_equal(lists.relevant_rank, [2, 1, 3])
    np.testing.assert_array_equal(lists.label_ptr, [0, 1, 3])
    np.testing.assert_array_equal(lists.list_length, [2, 3])


def test_with_relevant_only_drops_and_counts():
    kept, dropped = small().with_relevant_only()
    assert dropped == 1
    np.testing.assert_array_equal(kept.label_ids, ["a", "c"])


def test_first_labels():
    assert small().first_labels(2).n_labels == 2
    with pytest.raises(RankedListsError):
        small().first_labels(0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(relevant_rank=[1], label_ptr=[0, 1], list_length=[3], n_relevant=[0], num_docs=3),
         "size smaller than the number of relevant documents"),
        (dict(relevant_rank=[4], label_ptr=[0, 1], list_length=[3], n_relevant=[1], num_docs=5),
         "relevant rank beyond the list length"),
        (dict(relevant_rank=[2, 2], label_ptr=[0, 2], list_length=[3], n_relevant=[2], num_docs=5),
         "not strictly increasing"),
        (dict(relevant_rank=[1], label_ptr=[0, 1], list_length=[6], n_relevant=[1], num_docs=5),
         "list longer than num_docs"),
        (dict(relevant_rank=[0], label_ptr=[0, 1], list_length=[3], n_relevant=[1], num_docs=5),
         "relevant rank < 1"),
        (dict(relevant_rank=[1], label_ptr=[0, 1], list_length=[3, 3], n_relevant=[1], num_docs=5),
         "shape mismatch"),
        (dict(relevant_rank=[], label_ptr=[0], list_length=[], n_relevant=[], num_docs=5), "no label has a relevant document"),
        (dict(relevant_rank=[1], label_ptr=[0, 1], list_length=[3], n_relevant=[6], num_docs=5),
         "label 0 \\(index 0\\): size \\(relevant documents of the label\\) larger than num_docs = 5"),
    ],
)
def test_inconsistent_data_is_rejected(kwargs, message):
    with pytest.raises(RankedListsError, match=message):
        RankedLists(**kwargs)


def test_digest_names_the_data_exactly():
    """Equal lists share a digest; one moved rank, another m or the predict-all flag change it."""
    import dataclasses

    from xmlthresh.datasets.synthetic import generate_ranked_lists

    lists = generate_ranked_lists(n_labels=20, num_docs=50, seed=1)
    assert lists.digest() == generate_ranked_lists(n_labels=20, num_docs=50, seed=1).digest()
    moved = lists.relevant_rank.copy()
    moved[-1] += 1
    assert dataclasses.replace(lists, relevant_rank=moved).digest() != lists.digest()
    assert dataclasses.replace(lists, num_docs=51).digest() != lists.digest()
    assert dataclasses.replace(lists, include_predict_all=False).digest() != lists.digest()


def test_sizes_above_num_docs_name_the_first_labels_and_the_count():
    """WikiLSHTC with num_docs=1000 has 31 labels with more relevant documents than that: say which."""
    sizes = [1] * 3 + [50] * 31
    lists = [[1, 0]] * len(sizes)
    with pytest.raises(RankedListsError, match=r"labels 103, 104, 105, 106, 107 and 26 more \(first at index 3\): "
                                               r"size .* larger than num_docs = 40.* \(31 label\(s\) affected\)"):
        RankedLists.from_relevance_lists(lists, sizes, num_docs=40, label_ids=np.arange(100, 100 + len(sizes)))
