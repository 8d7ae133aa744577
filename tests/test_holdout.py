"""Holdout of ranked lists: an exact random split of each label's documents, and the transfer of cuts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xmlthresh.data.holdout import split_ranked_lists
from xmlthresh.datasets.synthetic import generate_ranked_lists
from xmlthresh.data.evaluation import true_positives_at_cuts
from xmlthresh.strategies import STRATEGIES


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([None, 30]), st.integers(0, 3))
def test_halves_partition_every_label(seed, list_length, data_seed):
    lists = generate_ranked_lists(n_labels=25, num_docs=120, list_length=list_length, seed=data_seed)
    halves = split_ranked_lists(lists, seed=seed)
    fit, ev = halves.fit, halves.eval
    assert fit.num_docs + ev.num_docs == lists.num_docs and fit.num_docs == 60
    np.testing.assert_array_equal(fit.n_relevant + ev.n_relevant, lists.n_relevant)
    np.testing.assert_array_equal(fit.list_length + ev.list_length, lists.list_length)
    # every relevant document of the list lands in exactly one half, keeping its original position
    both = np.sort(np.concatenate([
        halves.fit_original_rank + 1000 * np.repeat(np.arange(25), np.diff(fit.label_ptr)),
        halves.eval_original_rank + 1000 * np.repeat(np.arange(25), np.diff(ev.label_ptr)),
    ]))
    np.testing.assert_array_equal(both, lists.relevant_rank + 1000 * np.repeat(np.arange(25), np.diff(lists.label_ptr)))
    # a rank in a half counts the half's documents up to that original position
    assert np.all(fit.relevant_rank <= halves.fit_original_rank)
    assert np.all(ev.relevant_rank <= halves.eval_original_rank)


def test_transfer_predicts_the_eval_documents_above_the_same_original_position():
    lists = generate_ranked_lists(n_labels=40, num_docs=300, seed=5)
    halves = split_ranked_lists(lists, seed=11)
    model = STRATEGIES.get("domain")().fit_lists(halves.fit)
    eval_cuts = halves.transfer_cuts(model.cuts_)
    eval_tp = true_positives_at_cuts(halves.eval, eval_cuts)
    fit, ev = halves.fit, halves.eval
    for k in np.flatnonzero(fit.n_relevant > 0):
        cut = model.cuts_[k]
        if cut == fit.num_docs:
            assert eval_cuts[k] == ev.num_docs and eval_tp[k] == ev.n_relevant[k]
            continue
        rows = slice(fit.label_ptr[k], fit.label_ptr[k + 1])
        q = halves.fit_original_rank[rows][fit.relevant_rank[rows] == cut][0]
        assert eval_cuts[k] == q - cut
        eval_orig = halves.eval_original_rank[ev.label_ptr[k]:ev.label_ptr[k + 1]]
        assert eval_tp[k] == np.count_nonzero(eval_orig <= q)


def test_split_is_seeded_and_roughly_balanced():
    lists = generate_ranked_lists(n_labels=200, num_docs=1000, seed=0)
    a, b = split_ranked_lists(lists, seed=3), split_ranked_lists(lists, seed=3)
    np.testing.assert_array_equal(a.fit.relevant_rank, b.fit.relevant_rank)
    share = a.fit.n_relevant.sum() / lists.n_relevant.sum()
    assert 0.45 < share < 0.55


def test_bad_split_parameters():
    lists = generate_ranked_lists(n_labels=3, num_docs=10, seed=0)
    with pytest.raises(ValueError, match="fit_fraction"):
        split_ranked_lists(lists, fit_fraction=1.0)
