"""Candidate cuts: the conventions of docs/theory.md#conventions, each explicit."""

from __future__ import annotations

import numpy as np
import pytest

from xmlthresh.data.candidates import build_candidates
from xmlthresh.data.ranked_lists import RankedLists, RankedListsError


def test_cut_zero_is_never_a_candidate_and_cuts_follow_relevant_documents():
    cands = build_candidates(RankedLists.from_relevance_lists([[0, 1, 0, 1]], [2], 4), pareto=False)
    np.testing.assert_array_equal(cands.cut, [2, 4])
    np.testing.assert_array_equal(cands.tp, [1, 2])


def test_predict_all_added_only_when_it_adds_true_positives():
    truncated = RankedLists.from_relevance_lists([[1, 0]], [3], 10)
    np.testing.assert_array_equal(build_candidates(truncated, pareto=False).cut, [1, 10])
    np.testing.assert_array_equal(build_candidates(truncated, pareto=False).tp, [1, 3])
    off = RankedLists.from_relevance_lists([[1, 0]], [3], 10, include_predict_all=False)
    np.testing.assert_array_equal(build_candidates(off, pareto=False).cut, [1])
    complete = RankedLists.from_relevance_lists([[1, 0, 1]], [2], 3)  # predict-all = cut 3, same tp
    np.testing.assert_array_equal(build_candidates(complete, pareto=False).cut, [1, 3])


def test_unreachable_label_keeps_one_zero_candidate():
    lists = RankedLists.from_relevance_lists([[0, 0]], [1], 5, include_predict_all=False)
    cands = build_candidates(lists)
    np.testing.assert_array_equal(cands.cut, [0])
    np.testing.assert_array_equal(cands.tp, [0])


def test_dominated_candidates_are_dropped():
    # cuts 1 (p=1, r=1/3), 5 (p=2/5, r=2/3), 6 (p=1/2, r=1): the middle one is dominated by the last
    lists = RankedLists.from_relevance_lists([[1, 0, 0, 0, 1, 1, 0]], [3], 7)
    np.testing.assert_array_equal(build_candidates(lists, pareto=False).cut, [1, 5, 6])
    np.testing.assert_array_equal(build_candidates(lists, pareto=True).cut, [1, 6])


def test_labels_without_relevant_documents_must_be_dropped_first():
    lists = RankedLists.from_relevance_lists([[0, 0]], [0], 2)
    with pytest.raises(RankedListsError, match="with_relevant_only"):
        build_candidates(lists)


def test_espgame_candidate_count(real_data):
    from xmlthresh.data.ranked_list_format import read_ranked_lists

    lists = read_ranked_lists(real_data / "berger" / "ESPGameNN.txt", num_docs=2080)
    # docs/theory.md#pareto-reduction: 557,708 list positions -> 9,774 candidates
    assert build_candidates(lists, pareto=False).n_candidates == 9774
    assert build_candidates(lists, pareto=True).n_candidates < 9774
