"""``xmlthresh explain``: Table 1 (every threshold vector of the counterexample, its coordinate-wise maxima),
Table 7 (the linear objective per candidate at the optimum) and coordinate ascent stuck at 0.75."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from oracle import brute_force, small_instances
from xmlthresh.data.ranked_lists import RankedLists
from xmlthresh.cli.explain import all_vectors, coordinate_ascent, explain, main

COUNTEREXAMPLE = RankedLists.from_relevance_lists([[1, 0, 0, 1], [1, 0, 1, 0]], [2, 2], num_docs=4,
                                                  name="counterexample")


def test_table_1_lists_every_pair_and_both_coordinate_wise_maxima():
    text = explain(COUNTEREXAMPLE, 1.0, start=[4, 1])
    assert "every threshold vector (16)" in text
    assert "| (1, 3) | 0.8333 | 0.7500 | 0.7895 | !* |" in text  # the global optimum, 15/19
    assert "| (4, 1) | 0.7500 | 0.7500 | 0.7500 | * |" in text  # a coordinate-wise maximum that is not global
    assert "2 coordinate-wise maxima: (1, 3) F 0.7895, (4, 1) F 0.7500" in text
    assert "stops at (4, 1) with F-macro 0.750000: a coordinate-wise maximum 0.039474 below the optimum" in text
    # table 7: at the optimum label 0 keeps cut 1 although cut 4 has the larger linear objective (no fixed point)
    assert "| 1 | 1.0000 | 0.5000 | 0.909722 | yes | o |" in text and "| 4 | 0.5000 | 1.0000 | 0.975694 | yes | > |" in text


def test_table_7_lists_every_cut_of_the_example_class():
    """Table 7: all seven cuts of the Example class (relevance 1,0,0,0,1,1,0; cut 7 = predict all), not only its
    two Pareto candidates; the best response (cut 1) differs from the cut kept at the optimum (cut 6)."""
    example = RankedLists.from_relevance_lists([[1, 0, 0, 0, 1, 1, 0]] * 3, [3] * 3, num_docs=7, name="example")
    text = explain(example, 1.0, max_vectors=0)
    block = text.split("label 0 (position 0")[1].split("\nlabel ")[0]
    rows = [line for line in block.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [int(row.split("|")[1]) for row in rows] == [1, 2, 3, 4, 5, 6, 7]
    pareto = [row.split("|")[5].strip() for row in rows]
    assert pareto == ["yes", "no", "no", "no", "no", "yes", "no"]
    p = [float(row.split("|")[2]) for row in rows]
    r = [float(row.split("|")[3]) for row in rows]
    assert np.allclose(p, [1, 1 / 2, 1 / 3, 1 / 4, 2 / 5, 1 / 2, 3 / 7], atol=5e-5)
    assert np.allclose(r, [1 / 3, 1 / 3, 1 / 3, 1 / 3, 2 / 3, 1, 1], atol=5e-5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances(max_labels=3, max_docs=5))
def test_every_vector_table_agrees_with_brute_force(instance):
    lists, beta = instance
    kept = lists.select_labels(lists.n_relevant > 0) if not np.all(lists.n_relevant > 0) else lists
    if kept.n_labels == 0:
        return
    table = all_vectors(kept, beta)
    assert np.isclose(np.max(table["F"]), brute_force(lists, beta)["f_macro"], atol=1e-12)
    assert table["coordinate_max"][np.argmax(table["F"])]  # the global optimum is a coordinate-wise maximum
    # coordinate ascent from any vector ends at a coordinate-wise maximum of the table
    for start in table["cuts"][:: max(1, len(table["cuts"]) // 5)]:
        _, cuts, f = coordinate_ascent(kept, beta, start)
        row = np.flatnonzero((table["cuts"] == cuts).all(axis=1))[0]
        assert table["coordinate_max"][row] and np.isclose(f, table["F"][row], atol=1e-12)


@pytest.mark.slow  # composes the configuration and imports the plugins: ~3-5 s
def test_the_command_finds_the_plugin_data_set_and_fails_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("XMLTHRESH_HOME", str(Path(__file__).resolve().parents[1]))  # its plugins/ folder
    assert main(["dataset=counterexample", "--start", "4,1"]) == 0
    assert "stops at (4, 1) with F-macro 0.750000" in capsys.readouterr().out
    assert main(["dataset=counterexample", "--start", "4"]) == 1
    assert capsys.readouterr().err.strip() == ("xmlthresh explain: error: --start has 1 cuts; the data set has 2 "
                                               "labels with relevant documents")
    assert main(["dataset=nope"]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_tied_scores_admit_no_cut_inside_a_relevant_tie_group():
    """With ties, coordinate ascent must stay below the certified bound (a cut splitting a tie is not a rule)."""
    from xmlthresh.data.scores import ScoredSplit
    from xmlthresh.cli.explain import cut_options
    from xmlthresh.strategies import STRATEGIES

    rng = np.random.default_rng(3)
    labels = rng.random((60, 6)) < 0.3
    labels[0] = True
    scores = np.round(labels + rng.standard_normal(labels.shape), 0)  # few distinct values: many ties
    lists = ScoredSplit(scores, labels).ranking().lists
    for k in range(lists.n_labels):
        cuts, tp = cut_options(lists, k)
        rank = lists.relevant_rank[lists.label_ptr[k]:lists.label_ptr[k + 1]]
        end = lists.cut_of_relevant[lists.label_ptr[k]:lists.label_ptr[k + 1]]
        assert not any(((rank <= c) & (c < end)).any() for c in cuts[:-1])
    bound = STRATEGIES.get("domain")().fit_lists(lists).upper_bound_
    for start in (np.ones(lists.n_labels, dtype=np.int64), np.full(lists.n_labels, lists.num_docs)):
        _, _, f = coordinate_ascent(lists, 1.0, start)
        assert f <= bound + 1e-12
